-- +goose Up
-- Hourly rollups of the per-minute usage: see sqlite/00018_usage_hourly.sql
-- for the tables, models/store/usage_hours.go for the job.
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
