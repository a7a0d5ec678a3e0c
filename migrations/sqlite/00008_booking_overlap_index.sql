-- +goose Up
-- The overlap triggers of 00001 found a GPU's bookings through
-- booking_gpus_gpu_idx (gpu_id, starts_at), so that every insert walked all
-- the bookings of that GPU that start before the new one ends: its whole
-- history, growing by the day. By end time the walk covers only the
-- bookings that end after the new one starts, the few in the future.
CREATE INDEX booking_gpus_gpu_end_idx ON booking_gpus (gpu_id, ends_at);

DROP TRIGGER booking_gpus_no_overlap_insert;
DROP TRIGGER booking_gpus_no_overlap_update;

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

-- +goose Down
DROP TRIGGER booking_gpus_no_overlap_update;
DROP TRIGGER booking_gpus_no_overlap_insert;

-- +goose StatementBegin
CREATE TRIGGER booking_gpus_no_overlap_insert BEFORE INSERT ON booking_gpus
WHEN NEW.blocking
BEGIN
    SELECT RAISE(ABORT, 'booking_gpus_no_overlap')
    WHERE EXISTS (
        SELECT 1 FROM booking_gpus o
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
        SELECT 1 FROM booking_gpus o
        WHERE o.gpu_id = NEW.gpu_id AND o.blocking
          AND NOT (o.booking_id = OLD.booking_id AND o.gpu_id = OLD.gpu_id)
          AND o.starts_at < NEW.ends_at AND NEW.starts_at < o.ends_at
    );
END;
-- +goose StatementEnd

DROP INDEX booking_gpus_gpu_end_idx;
