-- +goose Up
-- A team whose multi-GPU bookings are all or nothing (jobs that cannot
-- run on fewer GPUs than they booked): a priority request that needs only
-- some GPUs of such a booking takes all of them over its window, and the
-- approval preview names it as the reason (models/priority_plan.go).
ALTER TABLE teams ADD COLUMN whole_bookings BOOLEAN NOT NULL DEFAULT FALSE;

-- +goose Down
ALTER TABLE teams DROP COLUMN whole_bookings;
