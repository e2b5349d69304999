-- Memories (seed 000 §4.3): what each person asked Sova to remember.
-- Connectors: a space kept in sync with a folder or a WebDAV share, and
-- what each connector last saw of its source's files (ETag, or mtime and
-- size), by which changes are noticed without reading the files. A
-- connector's password is the share's secret: never returned by the API.

-- +goose Up
CREATE TABLE memories (
    id         text        NOT NULL PRIMARY KEY,
    user_id    text        NOT NULL,
    content    text        NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX memories_user ON memories (user_id, created_at);

CREATE TABLE connectors (
    id           text        NOT NULL PRIMARY KEY,
    user_id      text        NOT NULL,
    space_id     text        NOT NULL UNIQUE REFERENCES spaces (id) ON DELETE CASCADE,
    kind         text        NOT NULL CHECK (kind IN ('folder', 'webdav')),
    location     text        NOT NULL,
    username     text        NOT NULL DEFAULT '',
    password     text        NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL,
    last_sync_at timestamptz,
    last_result  jsonb,
    last_error   text        NOT NULL DEFAULT ''
);
CREATE INDEX connectors_user ON connectors (user_id);

CREATE TABLE connector_files (
    connector_id text        NOT NULL REFERENCES connectors (id) ON DELETE CASCADE,
    path         text        NOT NULL,
    etag         text        NOT NULL DEFAULT '',
    size         bigint      NOT NULL,
    mod_time     timestamptz NOT NULL,
    PRIMARY KEY (connector_id, path)
);

-- +goose Down
DROP TABLE connector_files;
DROP TABLE connectors;
DROP TABLE memories;
