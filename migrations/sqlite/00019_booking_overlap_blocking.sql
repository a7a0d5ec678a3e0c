-- +goose Up
-- The overlap triggers walk booking_gpus_gpu_end_idx from the new booking's
-- start on: every row of that GPU ending later, blocking or not. A booking
-- released in its first second, or cancelled, stops blocking but keeps its
-- range, so a script that books and gives back in a loop left thousands of
-- such rows in every walk (BenchmarkBookNowAndRelease slowed as it ran).
-- Indexing only the blocking rows, as PostgreSQL's exclusion constraint
-- does (WHERE (blocking)), makes the walk see only what can conflict.
DROP TRIGGER booking_gpus_no_overlap_insert;
DROP TRIGGER booking_gpus_no_overlap_update;
DROP INDEX booking_gpus_gpu_end_idx;
CREATE INDEX booking_gpus_blocking_end_idx ON booking_gpus (gpu_id, ends_at) WHERE blocking;

-- +goose StatementBegin
CREATE TRIGGER booking_gpus_no_overlap_insert BEFORE INSERT ON booking_gpus
WHEN NEW.blocking
BEGIN
    SELECT RAISE(ABORT, 'booking_gpus_no_overlap')
    WHERE EXISTS (
        SELECT 1 FROM booking_gpus o INDEXED BY booking_gpus_blocking_end_idx
        WHERE o.gpu_id = NEW.gpu_id AND o.blocking
          AND o.starts_at < NEW.ends_at AND NEW.starts_at < o.ends_at
    );
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER booking_gpus_no_overlap_update BEFORE UPDATE ON booking_gpus
WHEN NEW.blocking
BEGIN
    SELECT RAISE(ABORT, 'booking_gpus_no_overlap')
    WHERE EXISTS (
        SELECT 1 FROM booking_gpus o INDEXED BY booking_gpus_blocking_end_idx
        WHERE o.gpu_id = NEW.gpu_id AND o.blocking
          AND NOT (o.booking_id = OLD.booking_id AND o.gpu_id = OLD.gpu_id)
          AND o.starts_at < NEW.ends_at AND NEW.starts_at < o.ends_at
    );
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER booking_gpus_no_overlap_insert;
DROP TRIGGER booking_gpus_no_overlap_update;
DROP INDEX booking_gpus_blocking_end_idx;
CREATE INDEX booking_gpus_gpu_end_idx ON booking_gpus (gpu_id, ends_at);

-- +goose StatementBegin
CREATE TRIGGER booking_gpus_no_overlap_insert BEFORE INSERT ON booking_gpus
WHEN NEW.blocking
BEGIN
    SELECT RAISE(ABORT, 'booking_gpus_no_overlap')
    WHERE EXISTS (
        SELECT 1 FROM booking_gpus o INDEXED BY booking_gpus_gpu_end_idx
        WHERE o.gpu_id = NEW.gpu_id AND o.blocking
          AND o.starts_at < NEW.ends_at AND NEW.starts_at < o.ends_at
    );
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER booking_gpus_no_overlap_update BEFORE UPDATE ON booking_gpus
WHEN NEW.blocking
BEGIN
    SELECT RAISE(ABORT, 'booking_gpus_no_overlap')
    WHERE EXISTS (
        SELECT 1 FROM booking_gpus o INDEXED BY booking_gpus_gpu_end_idx
        WHERE o.gpu_id = NEW.gpu_id AND o.blocking
          AND NOT (o.booking_id = OLD.booking_id AND o.gpu_id = OLD.gpu_id)
          AND o.starts_at < NEW.ends_at AND NEW.starts_at < o.ends_at
    );
END;
-- +goose StatementEnd
