-- +goose Up
-- The SQLite twin of postgres/00006_reports.sql.

-- A user may stop the weekly email; the report stays in the portal.
ALTER TABLE users ADD COLUMN report_email BOOLEAN NOT NULL DEFAULT TRUE;

-- A release moves ends_at earlier and forgets the old end. The report's
-- "given back early" figure needs it, whoever releases (the user, an admin,
-- the idle rule), so a trigger keeps it at the moment released_at is set.
ALTER TABLE bookings ADD COLUMN ends_before_release DATETIME;

-- +goose StatementBegin
CREATE TRIGGER bookings_keep_end_before_release AFTER UPDATE OF released_at ON bookings
WHEN OLD.released_at IS NULL AND NEW.released_at IS NOT NULL AND NEW.ends_before_release IS NULL
BEGIN
    UPDATE bookings SET ends_before_release = OLD.ends_at WHERE id = NEW.id;
END;
-- +goose StatementEnd

-- No-shows are counted in the week a booking ends; given-back hours in
-- the week of the release.
CREATE INDEX bookings_ends_idx ON bookings (ends_at);
CREATE INDEX bookings_released_idx ON bookings (released_at) WHERE released_at IS NOT NULL;

-- +goose Down
DROP INDEX bookings_released_idx;
DROP INDEX bookings_ends_idx;
DROP TRIGGER bookings_keep_end_before_release;
ALTER TABLE bookings DROP COLUMN ends_before_release;
ALTER TABLE users DROP COLUMN report_email;
