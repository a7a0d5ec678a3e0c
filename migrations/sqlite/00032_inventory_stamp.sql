-- +goose Up
-- inventory_stamp.version moves with every committed change to nodes or
-- gpus, in the same transaction as the change, so that a kept read of the
-- whole inventory is read again only when it has moved: see
-- postgres/00032_inventory_stamp.sql and models/store/inventory.go.
-- SQLite has no statement triggers: each changed row moves it.
CREATE TABLE inventory_stamp (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL
);
INSERT INTO inventory_stamp (id, version) VALUES (1, 1);

CREATE TRIGGER nodes_inventory_stamp_insert AFTER INSERT ON nodes
BEGIN INSERT OR REPLACE INTO inventory_stamp (id, version) VALUES (1, coalesce((SELECT version FROM inventory_stamp WHERE id = 1), 0) + 1); END;
CREATE TRIGGER nodes_inventory_stamp_update AFTER UPDATE ON nodes
BEGIN INSERT OR REPLACE INTO inventory_stamp (id, version) VALUES (1, coalesce((SELECT version FROM inventory_stamp WHERE id = 1), 0) + 1); END;
CREATE TRIGGER nodes_inventory_stamp_delete AFTER DELETE ON nodes
BEGIN INSERT OR REPLACE INTO inventory_stamp (id, version) VALUES (1, coalesce((SELECT version FROM inventory_stamp WHERE id = 1), 0) + 1); END;
CREATE TRIGGER gpus_inventory_stamp_insert AFTER INSERT ON gpus
BEGIN INSERT OR REPLACE INTO inventory_stamp (id, version) VALUES (1, coalesce((SELECT version FROM inventory_stamp WHERE id = 1), 0) + 1); END;
CREATE TRIGGER gpus_inventory_stamp_update AFTER UPDATE ON gpus
BEGIN INSERT OR REPLACE INTO inventory_stamp (id, version) VALUES (1, coalesce((SELECT version FROM inventory_stamp WHERE id = 1), 0) + 1); END;
CREATE TRIGGER gpus_inventory_stamp_delete AFTER DELETE ON gpus
BEGIN INSERT OR REPLACE INTO inventory_stamp (id, version) VALUES (1, coalesce((SELECT version FROM inventory_stamp WHERE id = 1), 0) + 1); END;

-- +goose Down
DROP TRIGGER gpus_inventory_stamp_delete;
DROP TRIGGER gpus_inventory_stamp_update;
DROP TRIGGER gpus_inventory_stamp_insert;
DROP TRIGGER nodes_inventory_stamp_delete;
DROP TRIGGER nodes_inventory_stamp_update;
DROP TRIGGER nodes_inventory_stamp_insert;
DROP TABLE inventory_stamp;
