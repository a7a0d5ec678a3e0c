-- +goose Up
-- The usage page of a week whose earlier weeks are read from their frozen
-- snapshots reads the GPU-minutes of that week only; whether a booking that
-- began before the week and ended in it had a busy minute before the week
-- is then looked up in the hourly sums by booking (models/store/report_sql.go,
-- minutesSQL's no-shows). The primary key leads with the hour, so without
-- this index each such booking would walk weeks of hourly rows.
CREATE INDEX usage_hours_booking_idx ON usage_hours (booking_id, unix_hour) WHERE busy > 0;

-- +goose Down
DROP INDEX usage_hours_booking_idx;
