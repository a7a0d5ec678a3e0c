-- +goose Up
-- inventory_stamp.version moves with every committed change to nodes or
-- gpus, in the same transaction as the change. A replica keeps its last
-- read of the whole inventory (every node and GPU, read by the calendar,
-- the status page and every booking form) and reads it again only when
-- the stamp has moved: one indexed row instead of every GPU, 50,000 at a
-- large lab (models/store/inventory.go). The stamp is read before the
-- rows, so a kept read is never older than its stamp says. A missing row
-- reads as 0 and the next change makes it again.
CREATE TABLE inventory_stamp (
    id      SMALLINT PRIMARY KEY CHECK (id = 1),
    version BIGINT NOT NULL
);
INSERT INTO inventory_stamp (id, version) VALUES (1, 1);

-- +goose StatementBegin
CREATE FUNCTION inventory_stamp_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO inventory_stamp (id, version) VALUES (1, 1)
        ON CONFLICT (id) DO UPDATE SET version = inventory_stamp.version + 1;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER nodes_inventory_stamp AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON nodes
    FOR EACH STATEMENT EXECUTE FUNCTION inventory_stamp_bump();
CREATE TRIGGER gpus_inventory_stamp AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON gpus
    FOR EACH STATEMENT EXECUTE FUNCTION inventory_stamp_bump();

-- +goose Down
DROP TRIGGER gpus_inventory_stamp ON gpus;
DROP TRIGGER nodes_inventory_stamp ON nodes;
DROP FUNCTION inventory_stamp_bump();
DROP TABLE inventory_stamp;
