-- +goose Up
-- Times are stored as UTC text in one fixed format (the store normalises
-- every value to UTC and whole seconds), so text comparison is time order.

CREATE TABLE users (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    oidc_subject TEXT UNIQUE,
    email        TEXT NOT NULL UNIQUE CHECK (email = lower(email) AND email <> ''),
    name         TEXT NOT NULL CHECK (name <> ''),
    language     TEXT NOT NULL DEFAULT '',
    time_zone    TEXT NOT NULL DEFAULT '',
    is_admin     BOOLEAN NOT NULL DEFAULT FALSE,
    created_at   DATETIME NOT NULL,
    updated_at   DATETIME NOT NULL
);

CREATE TABLE teams (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT NOT NULL UNIQUE CHECK (name <> ''),
    created_at DATETIME NOT NULL
);

CREATE TABLE memberships (
    team_id    INTEGER NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role       TEXT NOT NULL CHECK (role IN ('member', 'lead')),
    source     TEXT NOT NULL DEFAULT 'manual' CHECK (source IN ('manual', 'idp')),
    created_at DATETIME NOT NULL,
    PRIMARY KEY (team_id, user_id)
);
CREATE INDEX memberships_user_idx ON memberships (user_id);

CREATE TABLE nodes (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT NOT NULL UNIQUE CHECK (name <> ''),
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);

CREATE TABLE gpus (
    id                    INTEGER PRIMARY KEY AUTOINCREMENT,
    node_id               INTEGER NOT NULL REFERENCES nodes (id) ON DELETE RESTRICT,
    idx                   INTEGER NOT NULL CHECK (idx >= 0),
    uuid                  TEXT NOT NULL UNIQUE,
    model                 TEXT NOT NULL,
    memory_mib            INTEGER NOT NULL CHECK (memory_mib > 0),
    mig                   BOOLEAN NOT NULL DEFAULT FALSE,
    in_service            BOOLEAN NOT NULL DEFAULT TRUE,
    out_of_service_reason TEXT NOT NULL DEFAULT '',
    created_at            DATETIME NOT NULL,
    updated_at            DATETIME NOT NULL,
    UNIQUE (node_id, idx)
);

CREATE TABLE bookings (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id     INTEGER NOT NULL REFERENCES users (id) ON DELETE RESTRICT,
    node_id     INTEGER NOT NULL REFERENCES nodes (id) ON DELETE RESTRICT,
    starts_at   DATETIME NOT NULL,
    ends_at     DATETIME NOT NULL,
    note        TEXT NOT NULL DEFAULT '',
    kind        TEXT NOT NULL DEFAULT 'standard' CHECK (kind IN ('standard', 'priority')),
    status      TEXT NOT NULL DEFAULT 'confirmed' CHECK (status IN ('confirmed', 'cancelled')),
    released_at DATETIME,
    created_at  DATETIME NOT NULL,
    updated_at  DATETIME NOT NULL,
    CHECK (ends_at > starts_at)
);
CREATE INDEX bookings_user_idx ON bookings (user_id, starts_at);
CREATE INDEX bookings_range_idx ON bookings (starts_at, ends_at);

CREATE TABLE booking_gpus (
    booking_id INTEGER NOT NULL REFERENCES bookings (id) ON DELETE CASCADE,
    gpu_id     INTEGER NOT NULL REFERENCES gpus (id) ON DELETE RESTRICT,
    starts_at  DATETIME NOT NULL,
    ends_at    DATETIME NOT NULL,
    blocking   BOOLEAN NOT NULL DEFAULT TRUE,
    PRIMARY KEY (booking_id, gpu_id),
    CHECK (ends_at > starts_at)
);
CREATE INDEX booking_gpus_gpu_idx ON booking_gpus (gpu_id, starts_at);

-- SQLite has no exclusion constraints. The store checks and inserts inside
-- one BEGIN IMMEDIATE transaction (one writer at a time); these triggers are
-- a second line of defence that refuses an overlap from any other writer.
-- +goose StatementBegin
CREATE TRIGGER booking_gpus_no_overlap_insert BEFORE INSERT ON booking_gpus
WHEN NEW.blocking
BEGIN
    SELECT RAISE(ABORT, 'booking_gpus_no_overlap')
    WHERE EXISTS (
        SELECT 1 FROM booking_gpus o
        WHERE o.gpu_id = NEW.gpu_id AND o.blocking
          AND o.starts_at < NEW.ends_at AND NEW.starts_at < o.ends_at
    );
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER booking_gpus_no_overlap_update BEFORE UPDATE ON booking_gpus
WHEN NEW.blocking
BEGIN
    SELECT RAISE(ABORT, 'booking_gpus_no_overlap')
    WHERE EXISTS (
        SELECT 1 FROM booking_gpus o
        WHERE o.gpu_id = NEW.gpu_id AND o.blocking
          AND NOT (o.booking_id = OLD.booking_id AND o.gpu_id = OLD.gpu_id)
          AND o.starts_at < NEW.ends_at AND NEW.starts_at < o.ends_at
    );
END;
-- +goose StatementEnd

CREATE TABLE api_tokens (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    token_hash   TEXT NOT NULL UNIQUE,
    created_at   DATETIME NOT NULL,
    last_used_at DATETIME,
    revoked_at   DATETIME
);
CREATE INDEX api_tokens_user_idx ON api_tokens (user_id);

-- Sessions for alexedwards/scs (sqlite3store's schema).
CREATE TABLE sessions (
    token  TEXT PRIMARY KEY,
    data   BLOB NOT NULL,
    expiry REAL NOT NULL
);
CREATE INDEX sessions_expiry_idx ON sessions (expiry);

CREATE TABLE audit_events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    at          DATETIME NOT NULL,
    actor_id    INTEGER REFERENCES users (id) ON DELETE SET NULL,
    actor_label TEXT NOT NULL DEFAULT '',
    action      TEXT NOT NULL,
    target_type TEXT NOT NULL DEFAULT '',
    target_id   TEXT NOT NULL DEFAULT '',
    details     TEXT NOT NULL DEFAULT '',
    ip          TEXT NOT NULL DEFAULT ''
);
CREATE INDEX audit_events_at_idx ON audit_events (at DESC);
CREATE INDEX audit_events_action_idx ON audit_events (action, at DESC);
CREATE INDEX audit_events_target_idx ON audit_events (target_type, target_id);

-- +goose Down
DROP TABLE audit_events;
DROP TABLE sessions;
DROP TABLE api_tokens;
DROP TRIGGER booking_gpus_no_overlap_update;
DROP TRIGGER booking_gpus_no_overlap_insert;
DROP TABLE booking_gpus;
DROP TABLE bookings;
DROP TABLE gpus;
DROP TABLE nodes;
DROP TABLE memberships;
DROP TABLE teams;
DROP TABLE users;
