-- +goose Up
-- A person who leaves the lab is deactivated, not deleted: their bookings,
-- use and reports stay under their name, while they can no longer sign in
-- or use a token (docs/admin.md). NULL: an active account.
ALTER TABLE users ADD COLUMN disabled_at TIMESTAMPTZ;

-- +goose Down
ALTER TABLE users DROP COLUMN disabled_at;
