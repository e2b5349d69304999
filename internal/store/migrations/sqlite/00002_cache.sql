-- A cache of what retrieval fetched from the web: search answers by query
-- and pages by URL, so a repeated question within the TTL makes no second
-- network call. Entries are public web content, shared by all users; keys
-- are hashes, so queries are not kept in clear. Timestamps are Unix
-- milliseconds (UTC).

-- +goose Up
CREATE TABLE cache_entries (
    kind       TEXT    NOT NULL,
    key        TEXT    NOT NULL,
    value      BLOB    NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (kind, key)
) STRICT, WITHOUT ROWID;

CREATE INDEX cache_entries_expires_idx ON cache_entries (expires_at);

-- +goose Down
DROP TABLE cache_entries;
