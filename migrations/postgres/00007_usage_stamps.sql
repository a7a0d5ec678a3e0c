-- +goose Up
-- Stamps on the per-minute usage, so that the weekly report reads each
-- minute once instead of joining every minute to the bookings: the
-- confirmed booking that held the GPU at that minute, the most memory the
-- booker's processes held on it, the most any one user's processes held,
-- the minute as a number (minutes since 1970, UTC: cheap to bucket), and
-- on each user row whether that user was the booker. The store keeps
-- them: IngestUsage writes them with the rows, and every change to a
-- booking's range or status restamps the minutes it touches
-- (models/store/usage_stamps.go, where the statements below come from).
ALTER TABLE gpu_usage_minutes ADD COLUMN booking_id BIGINT;
ALTER TABLE gpu_usage_minutes ADD COLUMN booker_mem_mib BIGINT NOT NULL DEFAULT 0;
ALTER TABLE gpu_usage_minutes ADD COLUMN top_mem_mib BIGINT NOT NULL DEFAULT 0;
ALTER TABLE gpu_usage_minutes ADD COLUMN unix_minute BIGINT NOT NULL DEFAULT 0;
ALTER TABLE gpu_user_usage_minutes ADD COLUMN booked BOOLEAN NOT NULL DEFAULT FALSE;

UPDATE gpu_usage_minutes SET
    unix_minute = CAST(EXTRACT(EPOCH FROM minute) AS BIGINT) / 60,
    booking_id = (SELECT bg.booking_id FROM booking_gpus bg JOIN bookings b ON b.id = bg.booking_id
        WHERE bg.gpu_id = gpu_usage_minutes.gpu_id AND bg.starts_at <= gpu_usage_minutes.minute
          AND bg.ends_at > gpu_usage_minutes.minute AND b.status = 'confirmed' LIMIT 1),
    top_mem_mib = COALESCE((SELECT MAX(uu.memory_mib) FROM gpu_user_usage_minutes uu
        WHERE uu.gpu_id = gpu_usage_minutes.gpu_id AND uu.minute = gpu_usage_minutes.minute), 0);
UPDATE gpu_usage_minutes SET
    booker_mem_mib = COALESCE((SELECT MAX(uu.memory_mib) FROM gpu_user_usage_minutes uu JOIN bookings b ON b.id = gpu_usage_minutes.booking_id
        WHERE uu.gpu_id = gpu_usage_minutes.gpu_id AND uu.minute = gpu_usage_minutes.minute AND uu.user_id = b.user_id), 0)
    WHERE booking_id IS NOT NULL;
UPDATE gpu_user_usage_minutes SET booked = TRUE
    WHERE EXISTS (SELECT 1 FROM gpu_usage_minutes m JOIN bookings b ON b.id = m.booking_id
        WHERE m.gpu_id = gpu_user_usage_minutes.gpu_id AND m.minute = gpu_user_usage_minutes.minute
          AND b.user_id = gpu_user_usage_minutes.user_id);

-- Unbooked use is rare: the report reads it through a partial index
-- instead of scanning every user row.
CREATE INDEX gpu_user_usage_minutes_unbooked_idx ON gpu_user_usage_minutes (minute)
    WHERE NOT booked AND user_id IS NOT NULL;

-- +goose Down
DROP INDEX gpu_user_usage_minutes_unbooked_idx;
ALTER TABLE gpu_user_usage_minutes DROP COLUMN booked;
ALTER TABLE gpu_usage_minutes DROP COLUMN unix_minute;
ALTER TABLE gpu_usage_minutes DROP COLUMN top_mem_mib;
ALTER TABLE gpu_usage_minutes DROP COLUMN booker_mem_mib;
ALTER TABLE gpu_usage_minutes DROP COLUMN booking_id;
