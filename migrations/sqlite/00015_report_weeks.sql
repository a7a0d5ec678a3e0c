-- +goose Up
-- A closed report week, frozen: the figures computed once (models.WeekData
-- as JSON, in the format named by version) with the users, teams,
-- memberships, share weights and GPUs in service of that moment. Every
-- page, CSV, preview and re-send of the week reads this row, so what was
-- sent never changes; an admin replaces it only by a recompute (audited).
CREATE TABLE report_weeks (
    week       TEXT PRIMARY KEY,
    version    INTEGER NOT NULL,
    data       TEXT NOT NULL,
    frozen_at  DATETIME NOT NULL,
    frozen_by  TEXT NOT NULL DEFAULT ''
);

-- +goose Down
DROP TABLE report_weeks;
