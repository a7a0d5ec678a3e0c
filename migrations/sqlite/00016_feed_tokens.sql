-- +goose Up
-- Calendar feed tokens: the secret in a private ICS (webcal) feed's URL.
-- team_id NULL is the owner's own bookings; a team id is that team's
-- bookings, for its leads (and admins), checked again at every fetch. Only
-- the SHA-256 of a token is kept, like api_tokens. Each owner has at most
-- one active token per feed: making a new one revokes the old one.
CREATE TABLE feed_tokens (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    team_id      INTEGER REFERENCES teams (id) ON DELETE CASCADE,
    token_hash   TEXT NOT NULL UNIQUE CHECK (length(token_hash) = 64),
    created_at   DATETIME NOT NULL,
    last_used_at DATETIME,
    revoked_at   DATETIME
);
CREATE UNIQUE INDEX feed_tokens_one_active ON feed_tokens (user_id, COALESCE(team_id, 0)) WHERE revoked_at IS NULL;

-- +goose Down
DROP TABLE feed_tokens;
