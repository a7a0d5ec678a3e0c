-- +goose Up
-- A MIG instance is a bookable unit: a row of gpus whose parent_id is the
-- GPU it is a slice of. weight is what one hour of it counts as in
-- policies, quotas and reports: 1 for a whole GPU, slices / the parent's
-- mig_slices for an instance (1/7 for a 1g.10gb of an A100). On a GPU,
-- mig_slices is its compute slices while MIG is on; on an instance, its own.
-- An instance's idx is above any GPU index (64 and up), so that a node's
-- (node_id, idx) stays unique; people see it by its parent and profile.
ALTER TABLE gpus ADD COLUMN parent_id BIGINT REFERENCES gpus (id) ON DELETE RESTRICT;
ALTER TABLE gpus ADD COLUMN mig_profile TEXT NOT NULL DEFAULT '';
ALTER TABLE gpus ADD COLUMN mig_slices INTEGER NOT NULL DEFAULT 0 CHECK (mig_slices >= 0);
ALTER TABLE gpus ADD COLUMN mig_gi INTEGER;
ALTER TABLE gpus ADD COLUMN mig_ci INTEGER;
ALTER TABLE gpus ADD COLUMN weight DOUBLE PRECISION NOT NULL DEFAULT 1 CHECK (weight > 0 AND weight <= 1);
CREATE INDEX gpus_parent ON gpus (parent_id) WHERE parent_id IS NOT NULL;

-- +goose Down
DROP INDEX gpus_parent;
ALTER TABLE gpus DROP COLUMN weight;
ALTER TABLE gpus DROP COLUMN mig_ci;
ALTER TABLE gpus DROP COLUMN mig_gi;
ALTER TABLE gpus DROP COLUMN mig_slices;
ALTER TABLE gpus DROP COLUMN mig_profile;
ALTER TABLE gpus DROP COLUMN parent_id;
