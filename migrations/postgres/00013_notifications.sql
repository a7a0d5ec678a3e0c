-- +goose Up
-- In-app notifications: what the bell in the navigation counts and the
-- notifications page lists. A row is written in the same transaction as
-- the change it tells about (a pre-emption, a decision, a GPU taken out of
-- service), or where the matching email is enqueued. The text is rendered
-- when the page is shown, in the reader's language, from kind and params
-- (JSON); dedup_key makes recording idempotent like the outbox's.
CREATE TABLE notifications (
    id         BIGSERIAL PRIMARY KEY,
    user_id    BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind       TEXT NOT NULL CHECK (kind <> ''),
    dedup_key  TEXT NOT NULL UNIQUE CHECK (dedup_key <> ''),
    link       TEXT NOT NULL DEFAULT '',
    params     TEXT NOT NULL DEFAULT '{}',
    created_at TIMESTAMPTZ NOT NULL,
    read_at    TIMESTAMPTZ
);
CREATE INDEX notifications_user ON notifications (user_id, created_at);
CREATE INDEX notifications_unread ON notifications (user_id) WHERE read_at IS NULL;

-- +goose Down
DROP TABLE notifications;
