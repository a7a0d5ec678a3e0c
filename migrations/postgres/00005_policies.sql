-- +goose Up
-- Booking policies: limits per scope (global, team, user) and period (all
-- times, peak, off-peak), cluster-wide settings (peak schedule, admin
-- exemption), which teams may book which GPU models; priority requests that
-- team leads decide; the ledger of lent GPU-hours; reminder opt-out.
CREATE TABLE policy_limits (
    scope      TEXT NOT NULL CHECK (scope IN ('global', 'team', 'user')),
    scope_id   BIGINT NOT NULL DEFAULT 0,
    rule       TEXT NOT NULL CHECK (rule <> ''),
    period     TEXT NOT NULL DEFAULT '' CHECK (period IN ('', 'peak', 'offpeak')),
    value      BIGINT NOT NULL CHECK (value >= 0),
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (scope, scope_id, rule, period)
);

CREATE TABLE policy_settings (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE policy_model_teams (
    model   TEXT NOT NULL CHECK (model <> ''),
    team_id BIGINT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    PRIMARY KEY (model, team_id)
);

CREATE TABLE priority_requests (
    id          BIGSERIAL PRIMARY KEY,
    user_id     BIGINT NOT NULL REFERENCES users (id) ON DELETE RESTRICT,
    team_id     BIGINT REFERENCES teams (id) ON DELETE SET NULL,
    node_id     BIGINT NOT NULL REFERENCES nodes (id) ON DELETE RESTRICT,
    gpu_ids     TEXT NOT NULL,
    starts_at   TIMESTAMPTZ NOT NULL,
    ends_at     TIMESTAMPTZ NOT NULL,
    note        TEXT NOT NULL DEFAULT '',
    purpose     TEXT NOT NULL,
    urgency     TEXT NOT NULL,
    plan        TEXT NOT NULL,
    give_back   TEXT NOT NULL,
    preempt     BOOLEAN NOT NULL DEFAULT FALSE,
    status      TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'denied', 'expired', 'withdrawn')),
    decided_by  BIGINT REFERENCES users (id) ON DELETE SET NULL,
    decided_at  TIMESTAMPTZ,
    comment     TEXT NOT NULL DEFAULT '',
    booking_id  BIGINT REFERENCES bookings (id) ON DELETE SET NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL,
    CHECK (ends_at > starts_at)
);
CREATE INDEX priority_requests_pending_idx ON priority_requests (status, starts_at);
CREATE INDEX priority_requests_user_idx ON priority_requests (user_id, created_at);

CREATE TABLE quota_loans (
    id          BIGSERIAL PRIMARY KEY,
    week_start  TIMESTAMPTZ NOT NULL,
    from_user   BIGINT REFERENCES users (id) ON DELETE CASCADE,
    to_user     BIGINT REFERENCES users (id) ON DELETE CASCADE,
    team_id     BIGINT REFERENCES teams (id) ON DELETE CASCADE,
    gpu_minutes BIGINT NOT NULL CHECK (gpu_minutes > 0),
    note        TEXT NOT NULL DEFAULT '',
    created_at  TIMESTAMPTZ NOT NULL,
    CHECK (from_user IS NOT NULL OR to_user IS NOT NULL),
    CHECK ((from_user IS NOT NULL AND to_user IS NOT NULL) OR team_id IS NOT NULL)
);
CREATE INDEX quota_loans_week_idx ON quota_loans (week_start);

-- "Notify me when this frees": a user watches a GPU over a range and is
-- told once when no blocking booking is left in it.
CREATE TABLE gpu_watches (
    id          BIGSERIAL PRIMARY KEY,
    user_id     BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    gpu_id      BIGINT NOT NULL REFERENCES gpus (id) ON DELETE CASCADE,
    starts_at   TIMESTAMPTZ NOT NULL,
    ends_at     TIMESTAMPTZ NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    notified_at TIMESTAMPTZ,
    CHECK (ends_at > starts_at)
);
CREATE INDEX gpu_watches_open_idx ON gpu_watches (notified_at, ends_at);

ALTER TABLE users ADD COLUMN notify_reminders BOOLEAN NOT NULL DEFAULT TRUE;

-- +goose Down
ALTER TABLE users DROP COLUMN notify_reminders;
DROP TABLE gpu_watches;
DROP TABLE quota_loans;
DROP TABLE priority_requests;
DROP TABLE policy_model_teams;
DROP TABLE policy_settings;
DROP TABLE policy_limits;
