-- Document spaces and the metadata of their documents. The documents' text
-- lives in the search index (internal/spaces); these rows say what a space
-- holds. version names the ingestion whose chunks the index must hold for a
-- document, so the two can be reconciled after a crash.

-- +goose Up
CREATE TABLE spaces (
    id          text        NOT NULL PRIMARY KEY,
    user_id     text        NOT NULL,
    name        text        NOT NULL,
    description text        NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    UNIQUE (user_id, name)
);

CREATE TABLE documents (
    id          text        NOT NULL PRIMARY KEY,
    space_id    text        NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
    name        text        NOT NULL,
    title       text        NOT NULL DEFAULT '',
    format      text        NOT NULL DEFAULT '',
    size        bigint      NOT NULL,
    sha256      text        NOT NULL,
    chunk_count integer     NOT NULL,
    version     text        NOT NULL,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    UNIQUE (space_id, name)
);

-- +goose Down
DROP TABLE documents;
DROP TABLE spaces;
