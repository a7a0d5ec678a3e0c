-- +goose Up
-- The container (docker, containerd, podman, CRI-O) that held most of the
-- user's GPU memory in the minute, as the agent read it from the
-- processes' cgroups; '' when none of them ran in one. A rootful engine's
-- processes show as root or a container UID: the id is what lets an admin
-- find whose they were.
ALTER TABLE gpu_user_usage_minutes ADD COLUMN container TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE gpu_user_usage_minutes DROP COLUMN container;
