-- Chats and their messages. IDs are text because clients (the AI SDK) may
-- choose chat and message IDs that are not UUIDs.

-- +goose Up
CREATE TABLE chats (
    id         text        NOT NULL PRIMARY KEY,
    user_id    text        NOT NULL,
    title      text        NOT NULL DEFAULT '',
    mode       text        NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);

CREATE INDEX chats_user_updated_idx ON chats (user_id, updated_at DESC, id DESC);

-- seq breaks ties between messages created in the same millisecond, keeping
-- insertion order.
CREATE TABLE messages (
    seq           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id            text        NOT NULL UNIQUE,
    chat_id       text        NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    role          text        NOT NULL CHECK (role IN ('user', 'assistant', 'system')),
    content       text        NOT NULL DEFAULT '',
    parts         jsonb,
    sources       jsonb,
    input_tokens  bigint,
    output_tokens bigint,
    total_tokens  bigint,
    model         text        NOT NULL DEFAULT '',
    finish_reason text        NOT NULL DEFAULT '',
    mode          text        NOT NULL DEFAULT '',
    tool_calls    jsonb,
    error         text        NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL
);

CREATE INDEX messages_chat_created_idx ON messages (chat_id, created_at, seq);

-- +goose Down
DROP TABLE messages;
DROP TABLE chats;
