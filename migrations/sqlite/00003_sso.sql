-- +goose Up
-- Single sign-on: where a user's admin role comes from, their last groups,
-- and the admin-defined mapping of IdP groups to teams.
ALTER TABLE users ADD COLUMN admin_source TEXT NOT NULL DEFAULT '' CHECK (admin_source IN ('', 'manual', 'idp'));
ALTER TABLE users ADD COLUMN idp_groups TEXT NOT NULL DEFAULT '[]';
ALTER TABLE users ADD COLUMN last_sign_in_at DATETIME;
UPDATE users SET admin_source = 'manual' WHERE is_admin;

CREATE TABLE group_mappings (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    group_name TEXT NOT NULL UNIQUE CHECK (group_name <> ''),
    team_id    INTEGER NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    role       TEXT NOT NULL CHECK (role IN ('member', 'lead')),
    created_at DATETIME NOT NULL
);

-- +goose Down
DROP TABLE group_mappings;
ALTER TABLE users DROP COLUMN last_sign_in_at;
ALTER TABLE users DROP COLUMN idp_groups;
ALTER TABLE users DROP COLUMN admin_source;
