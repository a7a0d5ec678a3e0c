-- +goose Up
-- A booking cancelled shortly before it starts has blocked the calendar
-- for everyone else; the weekly report charges the hours its owner
-- cancelled less than GPUBOOK_REPORT_LATE_CANCEL before they start as
-- booked-idle (docs/reports.md). That needs when it was cancelled and by
-- whom: cancelled_by is set only by a cancel (not a pre-emption or a GPU
-- taken out of service), so "cancelled_by = user_id" is the owner's own.
-- Bookings cancelled before this take both from their cancel event.
ALTER TABLE bookings ADD COLUMN cancelled_at DATETIME;
ALTER TABLE bookings ADD COLUMN cancelled_by INTEGER REFERENCES users (id) ON DELETE SET NULL;
UPDATE bookings SET
    cancelled_at = COALESCE((SELECT MAX(a.at) FROM audit_events a WHERE a.target_type = 'booking'
        AND a.target_id = CAST(bookings.id AS TEXT) AND a.action IN ('booking.cancel', 'booking.preempt', 'booking.service')), updated_at),
    cancelled_by = (SELECT a.actor_id FROM audit_events a WHERE a.target_type = 'booking'
        AND a.target_id = CAST(bookings.id AS TEXT) AND a.action = 'booking.cancel' ORDER BY a.at DESC LIMIT 1)
WHERE status = 'cancelled';

-- +goose Down
ALTER TABLE bookings DROP COLUMN cancelled_by;
ALTER TABLE bookings DROP COLUMN cancelled_at;
