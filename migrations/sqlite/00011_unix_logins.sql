-- +goose Up
-- A user's login on the GPU nodes. users.unix_name is the primary login
-- (NULL: assumed to be the email's local part) and unix_source says who set
-- it ('' assumed, 'admin', 'sso'). unix_names holds every explicit name,
-- primary and extra, so that its primary key makes a name one user's only.
-- SQLite cannot add a UNIQUE column: the index does it.
ALTER TABLE users ADD COLUMN unix_name TEXT;
CREATE UNIQUE INDEX users_unix_name ON users (unix_name);
ALTER TABLE users ADD COLUMN unix_source TEXT NOT NULL DEFAULT ''
    CHECK (unix_source IN ('', 'admin', 'sso'));

CREATE TABLE unix_names (
    name       TEXT PRIMARY KEY CHECK (name <> ''),
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    is_primary BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX unix_names_user ON unix_names (user_id);

-- The container a violating process ran in (docker, containerd, podman),
-- as the agent read it from the process's cgroup; '' when none.
ALTER TABLE agent_violations ADD COLUMN container TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE agent_violations DROP COLUMN container;
DROP TABLE unix_names;
DROP INDEX users_unix_name;
ALTER TABLE users DROP COLUMN unix_source;
ALTER TABLE users DROP COLUMN unix_name;
