-- +goose Up
-- A refused open: the agent's device lock (cgroup2) refused a user's open
-- of a GPU they hold no booking of. No process to name (pid 0); one row
-- per user, GPU and episode.
ALTER TABLE agent_violations DROP CONSTRAINT agent_violations_kind_check,
    ADD CONSTRAINT agent_violations_kind_check
    CHECK (kind IN ('unbooked_use', 'overstay', 'memory_without_process', 'refused_open'));

-- +goose Down
DELETE FROM agent_violations WHERE kind = 'refused_open';
ALTER TABLE agent_violations DROP CONSTRAINT agent_violations_kind_check,
    ADD CONSTRAINT agent_violations_kind_check
    CHECK (kind IN ('unbooked_use', 'overstay', 'memory_without_process'));
