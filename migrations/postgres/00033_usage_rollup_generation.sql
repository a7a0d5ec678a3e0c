-- +goose Up
-- usage_rollup_state.generation moves in the same transaction as every
-- change to the rolled hours (a roll or re-roll that summed any hour, a
-- prune that deleted any), so that a replica may keep the sums of a week
-- in progress that it read from them and use them again while it holds:
-- the rolled part of the usage pages is then read once an hour, not once
-- a view (models/store/report_rolled.go).
ALTER TABLE usage_rollup_state ADD COLUMN generation BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE usage_rollup_state DROP COLUMN generation;
