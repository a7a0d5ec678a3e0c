-- +goose Up
-- Each team's weight in the fair-share entitled shares (docs/reports.md):
-- a team's part of the cluster is its weight over the sum of all weights,
-- split among its active members. 1 for every team keeps the parts equal,
-- as they were; an admin sets another on the team's page.
ALTER TABLE teams ADD COLUMN share_weight REAL NOT NULL DEFAULT 1 CHECK (share_weight > 0 AND share_weight <= 1000);

-- +goose Down
ALTER TABLE teams DROP COLUMN share_weight;
