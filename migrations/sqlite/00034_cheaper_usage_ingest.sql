-- +goose Up
-- See postgres/00034_cheaper_usage_ingest.sql. SQLite has no statement
-- triggers: its late-minute row triggers of 00018 stay (their WHEN clause
-- already skips the body for a minute that is not late). The index on the
-- local part of the email of users without a login of their own is the
-- same, with SQLite's expression for it (models/store/unix_names.go).
CREATE INDEX users_assumed_login_idx ON users (substr(email, 1, instr(email, '@') - 1)) WHERE unix_name IS NULL;

-- +goose Down
DROP INDEX users_assumed_login_idx;
