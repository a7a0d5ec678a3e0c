-- +goose Up
-- How the node enforces bookings, as its heartbeat reports it, for the node
-- page: "lock v1" / "lock v2" (cgroup device rules), "detect", or "detect
-- (cannot lock: REASON)" when lock was asked for and the node cannot do it.
ALTER TABLE agent_nodes ADD COLUMN lock_mode TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE agent_nodes DROP COLUMN lock_mode;
