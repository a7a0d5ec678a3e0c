-- +goose Up
-- The SQLite twin of postgres/00002_agents.sql: same tables, columns,
-- keys and checks; times are UTC text (see 00001).
-- The node agent's side of the portal: node credentials and one-time
-- enrolment tokens (both stored as SHA-256 hashes, like api_tokens), the
-- per-minute usage the agents report, violations and idle reports.

-- One row per enrolled node. credential_hash is NULL until the first
-- enrolment; a new enrolment replaces it (the old credential stops working).
CREATE TABLE agent_nodes (
    node_id           INTEGER PRIMARY KEY REFERENCES nodes (id) ON DELETE CASCADE,
    credential_hash   TEXT UNIQUE,
    hostname          TEXT NOT NULL DEFAULT '',
    agent_version     TEXT NOT NULL DEFAULT '',
    driver_version    TEXT NOT NULL DEFAULT '',
    enrolled_at       DATETIME,
    last_seen_at      DATETIME,
    last_heartbeat_at DATETIME,
    inventory_at      DATETIME,
    spool_depth       INTEGER NOT NULL DEFAULT 0,
    oldest_spooled    DATETIME,
    nvml_ok           BOOLEAN NOT NULL DEFAULT FALSE,
    schedule_etag     TEXT NOT NULL DEFAULT '',
    updated_at        DATETIME NOT NULL
);

CREATE TABLE agent_enroll_tokens (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    node_id    INTEGER NOT NULL REFERENCES nodes (id) ON DELETE CASCADE,
    token_hash TEXT NOT NULL UNIQUE,
    created_by INTEGER REFERENCES users (id) ON DELETE SET NULL,
    created_at DATETIME NOT NULL,
    expires_at DATETIME NOT NULL,
    used_at    DATETIME,
    CHECK (expires_at > created_at)
);
CREATE INDEX agent_enroll_tokens_node_idx ON agent_enroll_tokens (node_id);

-- One row per GPU per minute; the primary key is the agent's idempotency
-- key (the node is implied by the GPU), so a resend inserts nothing.
CREATE TABLE gpu_usage_minutes (
    gpu_id        INTEGER NOT NULL REFERENCES gpus (id) ON DELETE CASCADE,
    minute        DATETIME NOT NULL,
    util_avg_pct  REAL CHECK (util_avg_pct BETWEEN 0 AND 100),
    util_max_pct  REAL CHECK (util_max_pct BETWEEN 0 AND 100),
    mem_used_mib  INTEGER NOT NULL CHECK (mem_used_mib >= 0),
    mem_total_mib INTEGER NOT NULL CHECK (mem_total_mib >= 0),
    samples       INTEGER NOT NULL CHECK (samples > 0),
    PRIMARY KEY (gpu_id, minute)
);
CREATE INDEX gpu_usage_minutes_minute_idx ON gpu_usage_minutes (minute);

-- One row per (GPU, minute, unix user). user_id is set when the unix name
-- equals the local part of exactly one gpubook user's email.
CREATE TABLE gpu_user_usage_minutes (
    gpu_id     INTEGER NOT NULL REFERENCES gpus (id) ON DELETE CASCADE,
    minute     DATETIME NOT NULL,
    user_name  TEXT NOT NULL CHECK (user_name <> ''),
    user_id    INTEGER REFERENCES users (id) ON DELETE SET NULL,
    uid        INTEGER NOT NULL DEFAULT -1,
    memory_mib INTEGER NOT NULL DEFAULT 0,
    processes  INTEGER NOT NULL DEFAULT 0,
    busy       BOOLEAN NOT NULL DEFAULT FALSE,
    PRIMARY KEY (gpu_id, minute, user_name)
);
CREATE INDEX gpu_user_usage_minutes_user_idx ON gpu_user_usage_minutes (user_id, minute);
CREATE INDEX gpu_user_usage_minutes_name_idx ON gpu_user_usage_minutes (user_name, minute);
CREATE INDEX gpu_user_usage_minutes_minute_idx ON gpu_user_usage_minutes (minute);

-- Violations keyed by the agent's stable episode id; an escalation updates
-- the row (the latest action and last_seen are kept).
CREATE TABLE agent_violations (
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
    UNIQUE (node_id, agent_key)
);
CREATE INDEX agent_violations_last_seen_idx ON agent_violations (last_seen);
CREATE INDEX agent_violations_user_idx ON agent_violations (user_id, last_seen);

-- Idle reports keyed by the agent's stable (booking, episode) id.
-- warned_at and released_at record what the portal did about them.
CREATE TABLE agent_idle_reports (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    node_id     INTEGER NOT NULL REFERENCES nodes (id) ON DELETE CASCADE,
    agent_key   TEXT NOT NULL,
    booking_id  INTEGER NOT NULL REFERENCES bookings (id) ON DELETE CASCADE,
    user_name   TEXT NOT NULL DEFAULT '',
    gpu_uuids   TEXT NOT NULL,
    idle_since  DATETIME NOT NULL,
    reported_at DATETIME NOT NULL,
    received_at DATETIME NOT NULL,
    warned_at   DATETIME,
    released_at DATETIME,
    UNIQUE (node_id, agent_key)
);
CREATE INDEX agent_idle_reports_booking_idx ON agent_idle_reports (booking_id);
CREATE INDEX agent_idle_reports_reported_idx ON agent_idle_reports (reported_at);

-- +goose Down
DROP TABLE agent_idle_reports;
DROP TABLE agent_violations;
DROP TABLE gpu_user_usage_minutes;
DROP TABLE gpu_usage_minutes;
DROP TABLE agent_enroll_tokens;
DROP TABLE agent_nodes;
