-- +goose Up
-- The outbox: every email gpubook sends is first a row here, written in the
-- same transaction as the change it tells about and sent later by a worker.
-- dedup_key makes enqueueing idempotent (one report per user per week, one
-- notice per pre-emption); status 'unconfirmed' marks a send that may or may
-- not have reached the SMTP server and is never retried (never twice beats
-- at least once for mail).
CREATE TABLE outbox (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    kind            TEXT NOT NULL CHECK (kind <> ''),
    dedup_key       TEXT NOT NULL UNIQUE CHECK (dedup_key <> ''),
    to_user_id      INTEGER REFERENCES users (id) ON DELETE SET NULL,
    to_email        TEXT NOT NULL CHECK (to_email <> ''),
    lang            TEXT NOT NULL DEFAULT 'en',
    subject         TEXT NOT NULL,
    text_body       TEXT NOT NULL,
    html_body       TEXT NOT NULL DEFAULT '',
    unsubscribe_url TEXT NOT NULL DEFAULT '',
    status          TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sending', 'sent', 'failed', 'unconfirmed')),
    attempts        INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at DATETIME NOT NULL,
    lease_owner     TEXT NOT NULL DEFAULT '',
    lease_until     DATETIME,
    last_error      TEXT NOT NULL DEFAULT '',
    created_at      DATETIME NOT NULL,
    sent_at         DATETIME
);
CREATE INDEX outbox_due ON outbox (status, next_attempt_at);
CREATE INDEX outbox_lease ON outbox (status, lease_until);
CREATE INDEX outbox_sent ON outbox (sent_at);
CREATE INDEX outbox_to_user ON outbox (to_user_id);

-- Job leases: which process runs a background job now (owner, lease_until)
-- and which period of a periodic job (e.g. the report week 2026-W49) has been
-- claimed and finished, so that several replicas on one database run each
-- period exactly once and a missed period is caught up at the next start.
CREATE TABLE job_leases (
    name        TEXT PRIMARY KEY CHECK (name <> ''),
    owner       TEXT NOT NULL DEFAULT '',
    lease_until DATETIME NOT NULL,
    last_run_at DATETIME,
    last_period TEXT NOT NULL DEFAULT '',
    period_done BOOLEAN NOT NULL DEFAULT FALSE
);

-- +goose Down
DROP TABLE job_leases;
DROP TABLE outbox;
