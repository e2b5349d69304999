-- Document spaces and the metadata of their documents. The documents' text
-- lives in the search index (internal/spaces); these rows say what a space
-- holds. version names the ingestion whose chunks the index must hold for a
-- document, so the two can be reconciled after a crash.

-- +goose Up
CREATE TABLE spaces (
    id          TEXT    NOT NULL PRIMARY KEY,
    user_id     TEXT    NOT NULL,
    name        TEXT    NOT NULL,
    description TEXT    NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    UNIQUE (user_id, name)
) STRICT;

CREATE TABLE documents (
    id          TEXT    NOT NULL PRIMARY KEY,
    space_id    TEXT    NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
    name        TEXT    NOT NULL,
    title       TEXT    NOT NULL DEFAULT '',
    format      TEXT    NOT NULL DEFAULT '',
    size        INTEGER NOT NULL,
    sha256      TEXT    NOT NULL,
    chunk_count INTEGER NOT NULL,
    version     TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    UNIQUE (space_id, name)
) STRICT;

-- +goose Down
DROP TABLE documents;
DROP TABLE spaces;
