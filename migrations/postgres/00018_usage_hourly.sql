-- +goose Up
-- 1. The per-minute usage becomes partitioned by time (RANGE on minute):
-- one partition per UTC day, gpu_usage_minutes_pYYYYMMDD, created ahead by
-- the job "usage-partitions" (models/store/usage_partitions.go), so that
-- retention drops whole days instead of deleting rows. The existing table
-- is not copied: it becomes the partition "legacy" of every minute before
-- tomorrow (UTC), attached after a check that scans it once; retention
-- deletes from it as before until its last day is older than the retention,
-- then drops it. A DEFAULT partition takes any minute no day partition
-- holds (a job that fell behind, minutes far in the past); the job moves
-- them into their day when it creates it.
ALTER TABLE gpu_usage_minutes RENAME TO gpu_usage_minutes_legacy;
ALTER INDEX gpu_usage_minutes_pkey RENAME TO gpu_usage_minutes_legacy_pkey;
ALTER INDEX gpu_usage_minutes_minute_idx RENAME TO gpu_usage_minutes_legacy_minute_idx;
ALTER TABLE gpu_user_usage_minutes RENAME TO gpu_user_usage_minutes_legacy;
ALTER INDEX gpu_user_usage_minutes_pkey RENAME TO gpu_user_usage_minutes_legacy_pkey;
ALTER INDEX gpu_user_usage_minutes_user_idx RENAME TO gpu_user_usage_minutes_legacy_user_idx;
ALTER INDEX gpu_user_usage_minutes_name_idx RENAME TO gpu_user_usage_minutes_legacy_name_idx;
ALTER INDEX gpu_user_usage_minutes_minute_idx RENAME TO gpu_user_usage_minutes_legacy_minute_idx;
ALTER INDEX gpu_user_usage_minutes_unbooked_idx RENAME TO gpu_user_usage_minutes_legacy_unbooked_idx;

-- The new parents copy the old tables' columns, defaults and named CHECK
-- constraints (LIKE), so that every column an earlier migration added is
-- there and the old tables can be attached.
CREATE TABLE gpu_usage_minutes (LIKE gpu_usage_minutes_legacy INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
    PARTITION BY RANGE (minute);
ALTER TABLE gpu_usage_minutes ADD PRIMARY KEY (gpu_id, minute);
ALTER TABLE gpu_usage_minutes ADD FOREIGN KEY (gpu_id) REFERENCES gpus (id) ON DELETE CASCADE;
CREATE INDEX gpu_usage_minutes_minute_idx ON gpu_usage_minutes (minute);

CREATE TABLE gpu_user_usage_minutes (LIKE gpu_user_usage_minutes_legacy INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
    PARTITION BY RANGE (minute);
ALTER TABLE gpu_user_usage_minutes ADD PRIMARY KEY (gpu_id, minute, user_name);
ALTER TABLE gpu_user_usage_minutes ADD FOREIGN KEY (gpu_id) REFERENCES gpus (id) ON DELETE CASCADE;
ALTER TABLE gpu_user_usage_minutes ADD FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE SET NULL;
CREATE INDEX gpu_user_usage_minutes_user_idx ON gpu_user_usage_minutes (user_id, minute);
CREATE INDEX gpu_user_usage_minutes_name_idx ON gpu_user_usage_minutes (user_name, minute);
CREATE INDEX gpu_user_usage_minutes_minute_idx ON gpu_user_usage_minutes (minute);
CREATE INDEX gpu_user_usage_minutes_unbooked_idx ON gpu_user_usage_minutes (minute)
    WHERE NOT booked AND user_id IS NOT NULL;

-- +goose StatementBegin
DO $$
DECLARE
    tomorrow TIMESTAMPTZ := (date_trunc('day', now() AT TIME ZONE 'UTC') + INTERVAL '1 day') AT TIME ZONE 'UTC';
BEGIN
    EXECUTE format('ALTER TABLE gpu_usage_minutes ATTACH PARTITION gpu_usage_minutes_legacy FOR VALUES FROM (MINVALUE) TO (%L)', tomorrow);
    EXECUTE format('ALTER TABLE gpu_user_usage_minutes ATTACH PARTITION gpu_user_usage_minutes_legacy FOR VALUES FROM (MINVALUE) TO (%L)', tomorrow);
END
$$;
-- +goose StatementEnd
CREATE TABLE gpu_usage_minutes_default PARTITION OF gpu_usage_minutes DEFAULT;
CREATE TABLE gpu_user_usage_minutes_default PARTITION OF gpu_user_usage_minutes DEFAULT;

-- 2. Hourly rollups of the per-minute usage: see
-- sqlite/00018_usage_hourly.sql for the tables, models/store/usage_hours.go
-- for the job.
CREATE TABLE usage_hours (
    unix_hour  BIGINT NOT NULL,
    gpu_id     BIGINT NOT NULL REFERENCES gpus (id) ON DELETE CASCADE,
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

CREATE TABLE user_usage_hours (
    unix_hour  BIGINT NOT NULL,
    gpu_id     BIGINT NOT NULL REFERENCES gpus (id) ON DELETE CASCADE,
    user_id    BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    booking_id BIGINT NOT NULL DEFAULT 0,
    minutes    INTEGER NOT NULL,
    unbooked   INTEGER NOT NULL,
    PRIMARY KEY (unix_hour, gpu_id, user_id, booking_id)
);

CREATE TABLE usage_rollup_state (
    id            SMALLINT PRIMARY KEY CHECK (id = 1),
    rolled_to     BIGINT NOT NULL,
    rolled_at     TIMESTAMPTZ NOT NULL,
    busy_util_pct DOUBLE PRECISION NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL
);

CREATE TABLE usage_rollup_dirty (
    lo TIMESTAMPTZ NOT NULL,
    hi TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (lo, hi)
);

-- A late minute marks its hour dirty. The shared advisory lock pairs with
-- the exclusive one the roll job holds while it sums hours and moves
-- rolled_at (models/store/usage_hours.go, rollupLockKey): an insert either
-- commits before the job reads the minutes, or waits for the job and then
-- sees the new rolled_at, so no minute falls between the two.
-- +goose StatementBegin
CREATE FUNCTION usage_mark_late() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(7300018);
    IF NEW.minute < (SELECT rolled_at FROM usage_rollup_state WHERE id = 1) THEN
        INSERT INTO usage_rollup_dirty (lo, hi) VALUES (NEW.minute, NEW.minute) ON CONFLICT DO NOTHING;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER gpu_usage_minutes_late AFTER INSERT ON gpu_usage_minutes
    FOR EACH ROW EXECUTE FUNCTION usage_mark_late();
CREATE TRIGGER gpu_user_usage_minutes_late AFTER INSERT ON gpu_user_usage_minutes
    FOR EACH ROW EXECUTE FUNCTION usage_mark_late();

-- +goose Down
DROP TRIGGER gpu_user_usage_minutes_late ON gpu_user_usage_minutes;
DROP TRIGGER gpu_usage_minutes_late ON gpu_usage_minutes;
DROP FUNCTION usage_mark_late();
DROP TABLE usage_rollup_dirty;
DROP TABLE usage_rollup_state;
DROP TABLE user_usage_hours;
DROP TABLE usage_hours;

-- Back to plain tables: every partition's rows into one table each.
CREATE TABLE gpu_usage_minutes_plain (LIKE gpu_usage_minutes INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
INSERT INTO gpu_usage_minutes_plain SELECT * FROM gpu_usage_minutes;
CREATE TABLE gpu_user_usage_minutes_plain (LIKE gpu_user_usage_minutes INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
INSERT INTO gpu_user_usage_minutes_plain SELECT * FROM gpu_user_usage_minutes;
DROP TABLE gpu_user_usage_minutes;
DROP TABLE gpu_usage_minutes;
ALTER TABLE gpu_usage_minutes_plain RENAME TO gpu_usage_minutes;
ALTER TABLE gpu_usage_minutes ADD PRIMARY KEY (gpu_id, minute);
ALTER TABLE gpu_usage_minutes ADD FOREIGN KEY (gpu_id) REFERENCES gpus (id) ON DELETE CASCADE;
CREATE INDEX gpu_usage_minutes_minute_idx ON gpu_usage_minutes (minute);
ALTER TABLE gpu_user_usage_minutes_plain RENAME TO gpu_user_usage_minutes;
ALTER TABLE gpu_user_usage_minutes ADD PRIMARY KEY (gpu_id, minute, user_name);
ALTER TABLE gpu_user_usage_minutes ADD FOREIGN KEY (gpu_id) REFERENCES gpus (id) ON DELETE CASCADE;
ALTER TABLE gpu_user_usage_minutes ADD FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE SET NULL;
CREATE INDEX gpu_user_usage_minutes_user_idx ON gpu_user_usage_minutes (user_id, minute);
CREATE INDEX gpu_user_usage_minutes_name_idx ON gpu_user_usage_minutes (user_name, minute);
CREATE INDEX gpu_user_usage_minutes_minute_idx ON gpu_user_usage_minutes (minute);
CREATE INDEX gpu_user_usage_minutes_unbooked_idx ON gpu_user_usage_minutes (minute)
    WHERE NOT booked AND user_id IS NOT NULL;
