-- Accounts, their browser sessions and API keys, and the usage counters
-- behind the limits. Secrets are never stored: a password as its argon2id
-- hash, a session and an API key as the SHA-256 of the secret.

-- +goose Up
CREATE TABLE accounts (
    id            text        NOT NULL PRIMARY KEY,
    name          text        NOT NULL UNIQUE,
    role          text        NOT NULL CHECK (role IN ('admin', 'pro', 'free')),
    password_hash text        NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL,
    disabled      boolean     NOT NULL DEFAULT false
);

CREATE TABLE sessions (
    id           text        NOT NULL PRIMARY KEY,
    user_id      text        NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);

CREATE TABLE api_keys (
    id           text        NOT NULL PRIMARY KEY,
    user_id      text        NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    prefix       text        NOT NULL,
    hash         text        NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL,
    last_used_at timestamptz,
    revoked_at   timestamptz
);
CREATE INDEX api_keys_user ON api_keys (user_id);

CREATE TABLE usage_counters (
    subject text   NOT NULL,
    counter text   NOT NULL,
    period  text   NOT NULL,
    count   bigint NOT NULL,
    PRIMARY KEY (subject, counter, period)
);

-- +goose Down
DROP TABLE usage_counters;
DROP TABLE api_keys;
DROP TABLE sessions;
DROP TABLE accounts;
