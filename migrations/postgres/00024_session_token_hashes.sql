-- +goose Up
-- Sessions are kept under the SHA-256 of their token (64 hex digits, as
-- models.HashToken stores every other bearer secret), never the cookie
-- value itself: a backup, a dump or a stolen copy of the database then
-- holds nothing a browser could present. The rows already there are
-- hashed in place, so that everyone stays signed in; the check makes a
-- writer that forgets to hash fail instead of storing a usable token.
UPDATE sessions SET token = encode(sha256(convert_to(token, 'UTF8')), 'hex');
ALTER TABLE sessions ADD CONSTRAINT sessions_token_hashed CHECK (length(token) = 64);

-- +goose Down
-- A hash cannot be turned back into the token: the sessions are dropped,
-- and everyone signs in again.
ALTER TABLE sessions DROP CONSTRAINT sessions_token_hashed;
DELETE FROM sessions;
