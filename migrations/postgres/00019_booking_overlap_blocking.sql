-- +goose Up
-- The SQLite twin of this version indexes only the blocking rows for its
-- overlap triggers. PostgreSQL's exclusion constraint (00001) is already
-- partial (WHERE (blocking)). The version keeps both folders' numbers equal.
SELECT 1;

-- +goose Down
SELECT 1;
