-- +goose Up
-- attempt_started_at is set just before a message's SMTP transaction, on
-- the database's clock. A sending row whose lease ran out without it was
-- never attempted (its worker died earlier in the batch) and goes back to
-- pending; only a row with it may be unconfirmed.
ALTER TABLE outbox ADD COLUMN attempt_started_at TIMESTAMPTZ;

-- +goose Down
ALTER TABLE outbox DROP COLUMN attempt_started_at;
