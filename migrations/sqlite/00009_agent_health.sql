-- +goose Up
-- What an agent could not deliver or sample, as its heartbeat reports it,
-- for the node page: reports the portal refused as invalid (set aside on
-- the node, with the newest reason), reports dropped at the spool's bounds,
-- and since when NVML has been unavailable.
ALTER TABLE agent_nodes ADD COLUMN spool_set_aside INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agent_nodes ADD COLUMN spool_set_aside_reason TEXT NOT NULL DEFAULT '';
ALTER TABLE agent_nodes ADD COLUMN spool_set_aside_at DATETIME;
ALTER TABLE agent_nodes ADD COLUMN spool_dropped_usage BIGINT NOT NULL DEFAULT 0;
ALTER TABLE agent_nodes ADD COLUMN spool_dropped_events BIGINT NOT NULL DEFAULT 0;
ALTER TABLE agent_nodes ADD COLUMN nvml_down_since DATETIME;

-- +goose Down
ALTER TABLE agent_nodes DROP COLUMN nvml_down_since;
ALTER TABLE agent_nodes DROP COLUMN spool_dropped_events;
ALTER TABLE agent_nodes DROP COLUMN spool_dropped_usage;
ALTER TABLE agent_nodes DROP COLUMN spool_set_aside_at;
ALTER TABLE agent_nodes DROP COLUMN spool_set_aside_reason;
ALTER TABLE agent_nodes DROP COLUMN spool_set_aside;
