-- +goose Up
-- usage_rollup_state.generation moves with every change to the rolled
-- hours: see postgres/00033_usage_rollup_generation.sql.
ALTER TABLE usage_rollup_state ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE usage_rollup_state DROP COLUMN generation;
