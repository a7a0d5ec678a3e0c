-- +goose Up
-- The SQLite twin of this version gives its overlap triggers an index by
-- end time. PostgreSQL needs none: its exclusion constraint
-- (booking_gpus_no_overlap, 00001) checks overlaps through a GiST index
-- whatever the history. The version exists so that both folders keep the
-- same numbers.
SELECT 1;

-- +goose Down
SELECT 1;
