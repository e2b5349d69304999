-- Chats and their messages. Timestamps are Unix milliseconds (UTC), which
-- round-trip exactly at the precision the store keeps and sort numerically.
-- JSON documents are TEXT.

-- +goose Up
CREATE TABLE chats (
    id         TEXT    NOT NULL PRIMARY KEY,
    user_id    TEXT    NOT NULL,
    title      TEXT    NOT NULL DEFAULT '',
    mode       TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;

CREATE INDEX chats_user_updated_idx ON chats (user_id, updated_at DESC, id DESC);

-- seq (the rowid) breaks ties between messages created in the same
-- millisecond, keeping insertion order.
CREATE TABLE messages (
    seq           INTEGER NOT NULL PRIMARY KEY,
    id            TEXT    NOT NULL UNIQUE,
    chat_id       TEXT    NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    role          TEXT    NOT NULL CHECK (role IN ('user', 'assistant', 'system')),
    content       TEXT    NOT NULL DEFAULT '',
    parts         TEXT,
    sources       TEXT,
    input_tokens  INTEGER,
    output_tokens INTEGER,
    total_tokens  INTEGER,
    model         TEXT    NOT NULL DEFAULT '',
    finish_reason TEXT    NOT NULL DEFAULT '',
    mode          TEXT    NOT NULL DEFAULT '',
    tool_calls    TEXT,
    error         TEXT    NOT NULL DEFAULT '',
    created_at    INTEGER NOT NULL
) STRICT;

CREATE INDEX messages_chat_created_idx ON messages (chat_id, created_at, seq);

-- +goose Down
DROP TABLE messages;
DROP TABLE chats;
