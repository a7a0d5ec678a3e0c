-- +goose Up
-- Team names compare ignoring case ("Vision" and "vision" are one team),
-- as the store does in Go (models.TeamNamed); this index is the guarantee
-- against two sign-ins making the same team at once. Teams that already
-- differ only in case keep the oldest's name; each later one gets its id
-- appended ("vision (7)"), visible to the admin, who merges them by hand.
UPDATE teams SET name = name || ' (' || id || ')'
WHERE EXISTS (SELECT 1 FROM teams o WHERE lower(o.name) = lower(teams.name) AND o.id < teams.id);
CREATE UNIQUE INDEX teams_name_lower_idx ON teams (lower(name));

-- +goose Down
DROP INDEX teams_name_lower_idx;
