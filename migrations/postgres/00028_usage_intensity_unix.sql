-- +goose Up
-- Two more things the hourly rollups sum (models/store/usage_hours.go),
-- so that reports over rolled hours show them (docs/reports.md):
--
-- usage_hours gains, per (hour, GPU, booking), the booked minutes with a
-- utilisation recorded (util_n) and their utilisation summed in tenths of a
-- percent (util_sum): the mean utilisation of the booked GPU-minutes; and
-- the same over the busy minutes (busy_util_n, busy_util_sum): a booking
-- whose busy minutes average under GPUBOOK_REPORT_LOW_INTENSITY_PCT is
-- low-intensity.
ALTER TABLE usage_hours ADD COLUMN util_n INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_hours ADD COLUMN util_sum BIGINT NOT NULL DEFAULT 0;
ALTER TABLE usage_hours ADD COLUMN busy_util_n INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_hours ADD COLUMN busy_util_sum BIGINT NOT NULL DEFAULT 0;

-- unix_usage_hours sums, per (hour, GPU, Unix name), the minutes of user
-- rows that map to no gpubook user: use charged to nobody, which the
-- cluster page and the admins' weekly email show by name.
CREATE TABLE unix_usage_hours (
    unix_hour BIGINT NOT NULL,
    gpu_id    INTEGER NOT NULL REFERENCES gpus (id) ON DELETE CASCADE,
    user_name TEXT NOT NULL,
    minutes   INTEGER NOT NULL,
    PRIMARY KEY (unix_hour, gpu_id, user_name)
);

-- Hours rolled before this version have neither: mark every rolled hour
-- whose minutes are still stored dirty, so that the reports read them from
-- the minutes and the job rolls them again with the new sums.
INSERT INTO usage_rollup_dirty (lo, hi)
SELECT MIN(m.minute), s.rolled_at FROM gpu_usage_minutes m, usage_rollup_state s
WHERE m.minute < s.rolled_at GROUP BY s.rolled_at;

-- +goose Down
DROP TABLE unix_usage_hours;
ALTER TABLE usage_hours DROP COLUMN busy_util_sum;
ALTER TABLE usage_hours DROP COLUMN busy_util_n;
ALTER TABLE usage_hours DROP COLUMN util_sum;
ALTER TABLE usage_hours DROP COLUMN util_n;
