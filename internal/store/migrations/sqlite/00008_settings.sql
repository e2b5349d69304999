-- Each person's settings (GET/PUT /api/me): instructions added to every
-- mode's prompt, the language answers are written in, a time zone, the
-- model they chose, and the preferences saved for them (JSON object).
-- Keyed by user id, with no reference to accounts: the local user of an
-- installation without accounts has settings too.

-- +goose Up
CREATE TABLE user_settings (
    user_id             TEXT    NOT NULL PRIMARY KEY,
    custom_instructions TEXT    NOT NULL DEFAULT '',
    language            TEXT    NOT NULL DEFAULT '',
    time_zone           TEXT    NOT NULL DEFAULT '',
    model               TEXT    NOT NULL DEFAULT '',
    preferences         TEXT    NOT NULL DEFAULT '{}',
    updated_at          INTEGER NOT NULL
) STRICT;

-- The identities people sign in with through single sign-on: an account
-- is created on the first sign-in and found again by issuer and subject.
CREATE TABLE account_identities (
    issuer     TEXT NOT NULL,
    subject    TEXT NOT NULL,
    user_id    TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (issuer, subject)
) STRICT;
CREATE INDEX account_identities_user ON account_identities (user_id);

-- +goose Down
DROP TABLE account_identities;
DROP TABLE user_settings;
