-- A cache of what retrieval fetched from the web: search answers by query
-- and pages by URL, so a repeated question within the TTL makes no second
-- network call. Entries are public web content, shared by all users; keys
-- are hashes, so queries are not kept in clear.

-- +goose Up
CREATE TABLE cache_entries (
    kind       text        NOT NULL,
    key        text        NOT NULL,
    value      bytea       NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (kind, key)
);

CREATE INDEX cache_entries_expires_idx ON cache_entries (expires_at);

-- +goose Down
DROP TABLE cache_entries;
