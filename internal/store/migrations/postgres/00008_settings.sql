-- Each person's settings (GET/PUT /api/me): instructions added to every
-- mode's prompt, the language answers are written in, a time zone, the
-- model they chose, and the preferences saved for them (JSON object).
-- Keyed by user id, with no reference to accounts: the local user of an
-- installation without accounts has settings too.

-- +goose Up
CREATE TABLE user_settings (
    user_id             text        NOT NULL PRIMARY KEY,
    custom_instructions text        NOT NULL DEFAULT '',
    language            text        NOT NULL DEFAULT '',
    time_zone           text        NOT NULL DEFAULT '',
    model               text        NOT NULL DEFAULT '',
    preferences         text        NOT NULL DEFAULT '{}',
    updated_at          timestamptz NOT NULL
);

-- The identities people sign in with through single sign-on: an account
-- is created on the first sign-in and found again by issuer and subject.
CREATE TABLE account_identities (
    issuer     text NOT NULL,
    subject    text NOT NULL,
    user_id    text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (issuer, subject)
);
CREATE INDEX account_identities_user ON account_identities (user_id);

-- +goose Down
DROP TABLE account_identities;
DROP TABLE user_settings;
