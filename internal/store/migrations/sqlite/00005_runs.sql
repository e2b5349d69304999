-- Runs: one execution of a mode, detached from the request that started
-- it. Its events are kept in order so a client can resume the stream, and
-- its workspace files (deep_research) are kept with it.

-- +goose Up
CREATE TABLE runs (
    id         TEXT    NOT NULL PRIMARY KEY,
    user_id    TEXT    NOT NULL,
    chat_id    TEXT    REFERENCES chats (id) ON DELETE CASCADE,
    mode       TEXT    NOT NULL,
    state      TEXT    NOT NULL,
    question   TEXT    NOT NULL DEFAULT '',
    input      TEXT,
    pause      TEXT,
    error      TEXT    NOT NULL DEFAULT '',
    report     TEXT    NOT NULL DEFAULT '',
    message_id TEXT    NOT NULL DEFAULT '',
    usage      TEXT,
    last_seq   INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;

CREATE INDEX runs_chat_idx ON runs (chat_id, created_at DESC);
CREATE INDEX runs_state_idx ON runs (state);

CREATE TABLE run_events (
    run_id TEXT    NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq    INTEGER NOT NULL,
    event  TEXT    NOT NULL,
    PRIMARY KEY (run_id, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE run_files (
    run_id     TEXT    NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    path       TEXT    NOT NULL,
    content    TEXT    NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (run_id, path)
) STRICT, WITHOUT ROWID;

-- +goose Down
DROP TABLE run_files;
DROP TABLE run_events;
DROP TABLE runs;
