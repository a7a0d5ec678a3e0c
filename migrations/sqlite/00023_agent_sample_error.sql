-- +goose Up
-- Whether the node's agent can sample its GPUs, as its heartbeat reports
-- it: the latest sample's error and since when samples fail (NULL while
-- they work). A node whose samples fail is degraded and its figures stale.
ALTER TABLE agent_nodes ADD COLUMN sample_error TEXT NOT NULL DEFAULT '';
ALTER TABLE agent_nodes ADD COLUMN sample_failing_since DATETIME;

-- +goose Down
ALTER TABLE agent_nodes DROP COLUMN sample_failing_since;
ALTER TABLE agent_nodes DROP COLUMN sample_error;
