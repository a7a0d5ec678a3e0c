-- +goose Up
CREATE EXTENSION IF NOT EXISTS btree_gist;

CREATE TABLE users (
    id           BIGSERIAL PRIMARY KEY,
    oidc_subject TEXT UNIQUE,
    email        TEXT NOT NULL UNIQUE CHECK (email = lower(email) AND email <> ''),
    name         TEXT NOT NULL CHECK (name <> ''),
    language     TEXT NOT NULL DEFAULT '',
    time_zone    TEXT NOT NULL DEFAULT '',
    is_admin     BOOLEAN NOT NULL DEFAULT FALSE,
    created_at   TIMESTAMPTZ NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL
);

CREATE TABLE teams (
    id         BIGSERIAL PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE CHECK (name <> ''),
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE memberships (
    team_id    BIGINT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    user_id    BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role       TEXT NOT NULL CHECK (role IN ('member', 'lead')),
    source     TEXT NOT NULL DEFAULT 'manual' CHECK (source IN ('manual', 'idp')),
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (team_id, user_id)
);
CREATE INDEX memberships_user_idx ON memberships (user_id);

CREATE TABLE nodes (
    id         BIGSERIAL PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE CHECK (name <> ''),
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE gpus (
    id                    BIGSERIAL PRIMARY KEY,
    node_id               BIGINT NOT NULL REFERENCES nodes (id) ON DELETE RESTRICT,
    idx                   INTEGER NOT NULL CHECK (idx >= 0),
    uuid                  TEXT NOT NULL UNIQUE,
    model                 TEXT NOT NULL,
    memory_mib            BIGINT NOT NULL CHECK (memory_mib > 0),
    mig                   BOOLEAN NOT NULL DEFAULT FALSE,
    in_service            BOOLEAN NOT NULL DEFAULT TRUE,
    out_of_service_reason TEXT NOT NULL DEFAULT '',
    created_at            TIMESTAMPTZ NOT NULL,
    updated_at            TIMESTAMPTZ NOT NULL,
    UNIQUE (node_id, idx)
);

CREATE TABLE bookings (
    id          BIGSERIAL PRIMARY KEY,
    user_id     BIGINT NOT NULL REFERENCES users (id) ON DELETE RESTRICT,
    node_id     BIGINT NOT NULL REFERENCES nodes (id) ON DELETE RESTRICT,
    starts_at   TIMESTAMPTZ NOT NULL,
    ends_at     TIMESTAMPTZ NOT NULL,
    note        TEXT NOT NULL DEFAULT '',
    kind        TEXT NOT NULL DEFAULT 'standard' CHECK (kind IN ('standard', 'priority')),
    status      TEXT NOT NULL DEFAULT 'confirmed' CHECK (status IN ('confirmed', 'cancelled')),
    released_at TIMESTAMPTZ,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL,
    CHECK (ends_at > starts_at)
);
CREATE INDEX bookings_user_idx ON bookings (user_id, starts_at);
CREATE INDEX bookings_range_idx ON bookings (starts_at, ends_at);

-- One row per GPU of a booking. The range is copied here so that the
-- exclusion constraint can see it; the store keeps it equal to the booking's.
CREATE TABLE booking_gpus (
    booking_id BIGINT NOT NULL REFERENCES bookings (id) ON DELETE CASCADE,
    gpu_id     BIGINT NOT NULL REFERENCES gpus (id) ON DELETE RESTRICT,
    starts_at  TIMESTAMPTZ NOT NULL,
    ends_at    TIMESTAMPTZ NOT NULL,
    blocking   BOOLEAN NOT NULL DEFAULT TRUE,
    PRIMARY KEY (booking_id, gpu_id),
    CHECK (ends_at > starts_at),
    CONSTRAINT booking_gpus_no_overlap EXCLUDE USING gist (
        gpu_id WITH =,
        tstzrange(starts_at, ends_at, '[)') WITH &&
    ) WHERE (blocking)
);
CREATE INDEX booking_gpus_gpu_idx ON booking_gpus (gpu_id, starts_at);

CREATE TABLE api_tokens (
    id           BIGSERIAL PRIMARY KEY,
    user_id      BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    token_hash   TEXT NOT NULL UNIQUE,
    created_at   TIMESTAMPTZ NOT NULL,
    last_used_at TIMESTAMPTZ,
    revoked_at   TIMESTAMPTZ
);
CREATE INDEX api_tokens_user_idx ON api_tokens (user_id);

-- Sessions for alexedwards/scs (postgresstore's schema).
CREATE TABLE sessions (
    token  TEXT PRIMARY KEY,
    data   BYTEA NOT NULL,
    expiry TIMESTAMPTZ NOT NULL
);
CREATE INDEX sessions_expiry_idx ON sessions (expiry);

CREATE TABLE audit_events (
    id          BIGSERIAL PRIMARY KEY,
    at          TIMESTAMPTZ NOT NULL,
    actor_id    BIGINT REFERENCES users (id) ON DELETE SET NULL,
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
DROP TABLE booking_gpus;
DROP TABLE bookings;
DROP TABLE gpus;
DROP TABLE nodes;
DROP TABLE memberships;
DROP TABLE teams;
DROP TABLE users;
