-- +goose Up
-- Sessions are kept under the SHA-256 of their token (64 hex digits, as
-- models.HashToken stores every other bearer secret), never the cookie
-- value itself: a backup, a dump or a stolen copy of the database then
-- holds nothing a browser could present. The rows already there are
-- hashed in place, so that everyone stays signed in; the check makes a
-- writer that forgets to hash fail instead of storing a usable token.
-- SQLite has no SHA-256 of its own: gpubook_sha256_hex is registered by
-- gpubook's store package (models/store/sqlite_func.go) on every
-- connection it opens, so this migration runs only through gpubook.
-- SQLite cannot add a CHECK constraint: the table is rebuilt.
CREATE TABLE sessions_new (
    token  TEXT PRIMARY KEY CHECK (length(token) = 64),
    data   BLOB NOT NULL,
    expiry REAL NOT NULL
);
INSERT INTO sessions_new (token, data, expiry) SELECT gpubook_sha256_hex(token), data, expiry FROM sessions;
DROP TABLE sessions;
ALTER TABLE sessions_new RENAME TO sessions;
CREATE INDEX sessions_expiry_idx ON sessions (expiry);

-- +goose Down
-- A hash cannot be turned back into the token: the sessions are dropped,
-- and everyone signs in again.
CREATE TABLE sessions_new (
    token  TEXT PRIMARY KEY,
    data   BLOB NOT NULL,
    expiry REAL NOT NULL
);
DROP TABLE sessions;
ALTER TABLE sessions_new RENAME TO sessions;
CREATE INDEX sessions_expiry_idx ON sessions (expiry);
