-- +goose Up
-- What is running now (the live status page, the agents' schedules) reads
-- the confirmed bookings that end after now. Cancelled bookings keep their
-- range, and bookings_range_idx (by start) or bookings_ends_idx (by end)
-- walked every one of them too: a script that books and gives back in a
-- loop made the status page slower with every pair. By status first, the
-- walk sees only confirmed bookings.
CREATE INDEX bookings_status_ends_idx ON bookings (status, ends_at);

-- +goose Down
DROP INDEX bookings_status_ends_idx;
