-- Runs: one execution of a mode, detached from the request that started
-- it. Its events are kept in order so a client can resume the stream, and
-- its workspace files (deep_research) are kept with it.

-- +goose Up
CREATE TABLE runs (
    id         text        NOT NULL PRIMARY KEY,
    user_id    text        NOT NULL,
    chat_id    text        REFERENCES chats (id) ON DELETE CASCADE,
    mode       text        NOT NULL,
    state      text        NOT NULL,
    question   text        NOT NULL DEFAULT '',
    input      jsonb,
    pause      jsonb,
    error      text        NOT NULL DEFAULT '',
    report     text        NOT NULL DEFAULT '',
    message_id text        NOT NULL DEFAULT '',
    usage      jsonb,
    last_seq   bigint      NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);

CREATE INDEX runs_chat_idx ON runs (chat_id, created_at DESC);
CREATE INDEX runs_state_idx ON runs (state);

CREATE TABLE run_events (
    run_id text   NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq    bigint NOT NULL,
    event  jsonb  NOT NULL,
    PRIMARY KEY (run_id, seq)
);

CREATE TABLE run_files (
    run_id     text        NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    path       text        NOT NULL,
    content    text        NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (run_id, path)
);

-- +goose Down
DROP TABLE run_files;
DROP TABLE run_events;
DROP TABLE runs;
