-- +goose Up
-- What every usage batch cost the database, by the row or by the user, and
-- how long it could wait, that a fleet's ingest multiplies (docs/scaling.md):
--
-- 1. The late-minute triggers of 00018 ran a PL/pgSQL function for every
--    inserted row (a shared advisory lock and a read of rolled_at each):
--    two or three dozen calls per node and minute. Once per INSERT
--    statement, over the rows it inserted (a transition table), does the
--    same marks at the same point (the end of the statement, where row
--    AFTER triggers fired too). A statement that inserted nothing (a
--    resend) does nothing.
-- 2. Every insert took the shared lock, so all ingest waited while the roll
--    job (exclusive) summed an hour: seconds at thousands of GPUs, once an
--    hour. The lock only keeps a minute of an hour the job may be rolling
--    from falling between its read and its new rolled_at. The job rolls an
--    hour RollupGrace (10 min) after it ended, on the database's clock
--    (cmd/gpubook's usage-rollup job), so a statement whose minutes are all
--    in the current hour of its transaction's start (now()) cannot meet a
--    roll of their hour and takes no lock; a minute of an earlier hour
--    (a resend, a backlog, the last minute of the hour) still does.
-- +goose StatementBegin
CREATE FUNCTION usage_mark_late_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM new_rows) THEN
        RETURN NULL;
    END IF;
    IF EXISTS (SELECT 1 FROM new_rows WHERE minute < date_trunc('hour', now())) THEN
        PERFORM pg_advisory_xact_lock_shared(7300018);
    END IF;
    INSERT INTO usage_rollup_dirty (lo, hi)
        SELECT DISTINCT n.minute, n.minute FROM new_rows n
        WHERE n.minute < (SELECT rolled_at FROM usage_rollup_state WHERE id = 1)
        ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

DROP TRIGGER gpu_usage_minutes_late ON gpu_usage_minutes;
DROP TRIGGER gpu_user_usage_minutes_late ON gpu_user_usage_minutes;
CREATE TRIGGER gpu_usage_minutes_late AFTER INSERT ON gpu_usage_minutes
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION usage_mark_late_rows();
CREATE TRIGGER gpu_user_usage_minutes_late AFTER INSERT ON gpu_user_usage_minutes
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION usage_mark_late_rows();

-- 3. Mapping the unix names of a batch to users read every user without a
--    login of their own (email LIKE ANY of the names' patterns, which no
--    index serves). The local part of the email, indexed for exactly
--    those users, is what the look-up compares (models/store/unix_names.go).
CREATE INDEX users_assumed_login_idx ON users (split_part(email, '@', 1)) WHERE unix_name IS NULL;

-- +goose Down
DROP INDEX users_assumed_login_idx;
DROP TRIGGER gpu_user_usage_minutes_late ON gpu_user_usage_minutes;
DROP TRIGGER gpu_usage_minutes_late ON gpu_usage_minutes;
DROP FUNCTION usage_mark_late_rows();
CREATE TRIGGER gpu_usage_minutes_late AFTER INSERT ON gpu_usage_minutes
    FOR EACH ROW EXECUTE FUNCTION usage_mark_late();
CREATE TRIGGER gpu_user_usage_minutes_late AFTER INSERT ON gpu_user_usage_minutes
    FOR EACH ROW EXECUTE FUNCTION usage_mark_late();
