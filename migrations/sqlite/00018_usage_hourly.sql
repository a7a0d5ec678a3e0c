-- +goose Up
-- Hourly rollups of the per-minute usage (models/usage_hours.go,
-- models/store/usage_hours.go, docs/scaling.md). The job "usage-rollup"
-- sums every complete UTC hour per (GPU, booking) and per (GPU, user,
-- booking); the reports read these sums for the hours before rolled_to and
-- the minutes only after it, so that the minutes can be kept for a shorter
-- time (GPUBOOK_USAGE_RETENTION_DAYS) than the sums
-- (GPUBOOK_USAGE_ROLLUP_RETENTION_DAYS). unix_hour is Unix seconds / 3600
-- (UTC); booking_id 0 is "no booking held the GPU".
--
-- usage_hours counts, per (hour, GPU, booking): minutes stored, and of
-- those the ones the report reads (counted: utilisation at the busy
-- threshold or memory held), busy, held idle, no per-user data, busy for
-- anyone (report_sql.go's minute predicates at busy_util_pct) and minutes
-- with a user's processes on it without their booking (unbooked).
CREATE TABLE usage_hours (
    unix_hour  BIGINT NOT NULL,
    gpu_id     INTEGER NOT NULL REFERENCES gpus (id) ON DELETE CASCADE,
    booking_id BIGINT NOT NULL DEFAULT 0,
    minutes    INTEGER NOT NULL,
    counted    INTEGER NOT NULL,
    busy       INTEGER NOT NULL,
    held       INTEGER NOT NULL,
    nodata     INTEGER NOT NULL,
    anyone     INTEGER NOT NULL,
    unbooked   INTEGER NOT NULL,
    PRIMARY KEY (unix_hour, gpu_id, booking_id)
);

-- Per (hour, GPU, user, booking that held the GPU): the user's minutes and
-- those of them that were not on their own booking (unbooked). Only user
-- rows mapped to a gpubook user are summed: no figure reads the others.
CREATE TABLE user_usage_hours (
    unix_hour  BIGINT NOT NULL,
    gpu_id     INTEGER NOT NULL REFERENCES gpus (id) ON DELETE CASCADE,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    booking_id BIGINT NOT NULL DEFAULT 0,
    minutes    INTEGER NOT NULL,
    unbooked   INTEGER NOT NULL,
    PRIMARY KEY (unix_hour, gpu_id, user_id, booking_id)
);

-- One row once the job has run: hours before rolled_to (rolled_at, the
-- same instant as a time) are rolled, with the busy threshold given.
CREATE TABLE usage_rollup_state (
    id            INTEGER PRIMARY KEY CHECK (id = 1),
    rolled_to     BIGINT NOT NULL,
    rolled_at     DATETIME NOT NULL,
    busy_util_pct DOUBLE PRECISION NOT NULL,
    updated_at    DATETIME NOT NULL
);

-- Minutes that changed in hours already rolled: a late minute (lo = hi,
-- written by the triggers below) or a restamped range [lo, hi) (written by
-- the store when a booking change restamps rolled minutes). The reports
-- read those hours from the minutes until the job re-rolls them.
CREATE TABLE usage_rollup_dirty (
    lo DATETIME NOT NULL,
    hi DATETIME NOT NULL,
    PRIMARY KEY (lo, hi)
);

-- +goose StatementBegin
CREATE TRIGGER gpu_usage_minutes_late AFTER INSERT ON gpu_usage_minutes
WHEN NEW.minute < (SELECT rolled_at FROM usage_rollup_state WHERE id = 1)
BEGIN
    INSERT OR IGNORE INTO usage_rollup_dirty (lo, hi) VALUES (NEW.minute, NEW.minute);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER gpu_user_usage_minutes_late AFTER INSERT ON gpu_user_usage_minutes
WHEN NEW.minute < (SELECT rolled_at FROM usage_rollup_state WHERE id = 1)
BEGIN
    INSERT OR IGNORE INTO usage_rollup_dirty (lo, hi) VALUES (NEW.minute, NEW.minute);
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER gpu_user_usage_minutes_late;
DROP TRIGGER gpu_usage_minutes_late;
DROP TABLE usage_rollup_dirty;
DROP TABLE usage_rollup_state;
DROP TABLE user_usage_hours;
DROP TABLE usage_hours;
