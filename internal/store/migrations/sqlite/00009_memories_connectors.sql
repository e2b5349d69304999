-- Memories (seed 000 §4.3): what each person asked Sova to remember.
-- Connectors: a space kept in sync with a folder or a WebDAV share, and
-- what each connector last saw of its source's files (ETag, or mtime and
-- size), by which changes are noticed without reading the files. A
-- connector's password is the share's secret: never returned by the API.

-- +goose Up
CREATE TABLE memories (
    id         TEXT    NOT NULL PRIMARY KEY,
    user_id    TEXT    NOT NULL,
    content    TEXT    NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX memories_user ON memories (user_id, created_at);

CREATE TABLE connectors (
    id          TEXT    NOT NULL PRIMARY KEY,
    user_id     TEXT    NOT NULL,
    space_id    TEXT    NOT NULL UNIQUE REFERENCES spaces (id) ON DELETE CASCADE,
    kind        TEXT    NOT NULL CHECK (kind IN ('folder', 'webdav')),
    location    TEXT    NOT NULL,
    username    TEXT    NOT NULL DEFAULT '',
    password    TEXT    NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    last_sync_at INTEGER,
    last_result TEXT,
    last_error  TEXT    NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX connectors_user ON connectors (user_id);

CREATE TABLE connector_files (
    connector_id TEXT    NOT NULL REFERENCES connectors (id) ON DELETE CASCADE,
    path         TEXT    NOT NULL,
    etag         TEXT    NOT NULL DEFAULT '',
    size         INTEGER NOT NULL,
    mod_time     INTEGER NOT NULL,
    PRIMARY KEY (connector_id, path)
) STRICT;

-- +goose Down
DROP TABLE connector_files;
DROP TABLE connectors;
DROP TABLE memories;
