-- Accounts, their browser sessions and API keys, and the usage counters
-- behind the limits. Secrets are never stored: a password as its argon2id
-- hash, a session and an API key as the SHA-256 of the secret.

-- +goose Up
CREATE TABLE accounts (
    id            TEXT    NOT NULL PRIMARY KEY,
    name          TEXT    NOT NULL UNIQUE,
    role          TEXT    NOT NULL CHECK (role IN ('admin', 'pro', 'free')),
    password_hash TEXT    NOT NULL DEFAULT '',
    created_at    INTEGER NOT NULL,
    disabled      INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE TABLE sessions (
    id           TEXT    NOT NULL PRIMARY KEY,
    user_id      TEXT    NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL
) STRICT;
CREATE INDEX sessions_user ON sessions (user_id);

CREATE TABLE api_keys (
    id           TEXT    NOT NULL PRIMARY KEY,
    user_id      TEXT    NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    prefix       TEXT    NOT NULL,
    hash         TEXT    NOT NULL UNIQUE,
    created_at   INTEGER NOT NULL,
    last_used_at INTEGER,
    revoked_at   INTEGER
) STRICT;
CREATE INDEX api_keys_user ON api_keys (user_id);

CREATE TABLE usage_counters (
    subject TEXT    NOT NULL,
    counter TEXT    NOT NULL,
    period  TEXT    NOT NULL,
    count   INTEGER NOT NULL,
    PRIMARY KEY (subject, counter, period)
) STRICT;

-- +goose Down
DROP TABLE usage_counters;
DROP TABLE api_keys;
DROP TABLE sessions;
DROP TABLE accounts;
