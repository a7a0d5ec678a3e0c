-- +goose Up
-- A refused open: the agent's device lock (cgroup2) refused a user's open
-- of a GPU they hold no booking of. No process to name (pid 0); one row
-- per user, GPU and episode. SQLite cannot alter a CHECK constraint: the
-- table is rebuilt with the same columns, rows, ids and indexes.
CREATE TABLE agent_violations_new (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    node_id     INTEGER NOT NULL REFERENCES nodes (id) ON DELETE CASCADE,
    agent_key   TEXT NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('unbooked_use', 'overstay', 'memory_without_process', 'refused_open')),
    gpu_id      INTEGER NOT NULL REFERENCES gpus (id) ON DELETE CASCADE,
    user_name   TEXT NOT NULL DEFAULT '',
    user_id     INTEGER REFERENCES users (id) ON DELETE SET NULL,
    uid         INTEGER NOT NULL DEFAULT -1,
    pid         INTEGER NOT NULL DEFAULT 0,
    memory_mib  INTEGER NOT NULL DEFAULT 0,
    booking_id  INTEGER REFERENCES bookings (id) ON DELETE SET NULL,
    action      TEXT NOT NULL CHECK (action IN ('none', 'warned', 'sigterm', 'sigkill')),
    first_seen  DATETIME NOT NULL,
    last_seen   DATETIME NOT NULL,
    received_at DATETIME NOT NULL,
    container   TEXT NOT NULL DEFAULT '',
    UNIQUE (node_id, agent_key)
);
INSERT INTO agent_violations_new (id, node_id, agent_key, kind, gpu_id, user_name, user_id, uid, pid, memory_mib,
    booking_id, action, first_seen, last_seen, received_at, container)
SELECT id, node_id, agent_key, kind, gpu_id, user_name, user_id, uid, pid, memory_mib,
    booking_id, action, first_seen, last_seen, received_at, container FROM agent_violations;
DROP TABLE agent_violations;
ALTER TABLE agent_violations_new RENAME TO agent_violations;
CREATE INDEX agent_violations_last_seen_idx ON agent_violations (last_seen);
CREATE INDEX agent_violations_user_idx ON agent_violations (user_id, last_seen);

-- +goose Down
CREATE TABLE agent_violations_new (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    node_id     INTEGER NOT NULL REFERENCES nodes (id) ON DELETE CASCADE,
    agent_key   TEXT NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('unbooked_use', 'overstay', 'memory_without_process')),
    gpu_id      INTEGER NOT NULL REFERENCES gpus (id) ON DELETE CASCADE,
    user_name   TEXT NOT NULL DEFAULT '',
    user_id     INTEGER REFERENCES users (id) ON DELETE SET NULL,
    uid         INTEGER NOT NULL DEFAULT -1,
    pid         INTEGER NOT NULL DEFAULT 0,
    memory_mib  INTEGER NOT NULL DEFAULT 0,
    booking_id  INTEGER REFERENCES bookings (id) ON DELETE SET NULL,
    action      TEXT NOT NULL CHECK (action IN ('none', 'warned', 'sigterm', 'sigkill')),
    first_seen  DATETIME NOT NULL,
    last_seen   DATETIME NOT NULL,
    received_at DATETIME NOT NULL,
    container   TEXT NOT NULL DEFAULT '',
    UNIQUE (node_id, agent_key)
);
INSERT INTO agent_violations_new (id, node_id, agent_key, kind, gpu_id, user_name, user_id, uid, pid, memory_mib,
    booking_id, action, first_seen, last_seen, received_at, container)
SELECT id, node_id, agent_key, kind, gpu_id, user_name, user_id, uid, pid, memory_mib,
    booking_id, action, first_seen, last_seen, received_at, container FROM agent_violations WHERE kind <> 'refused_open';
DROP TABLE agent_violations;
ALTER TABLE agent_violations_new RENAME TO agent_violations;
CREATE INDEX agent_violations_last_seen_idx ON agent_violations (last_seen);
CREATE INDEX agent_violations_user_idx ON agent_violations (user_id, last_seen);
