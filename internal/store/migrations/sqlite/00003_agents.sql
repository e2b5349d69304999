-- Schema-guided reasoning agents (sgr_agent): their state, counters and the
-- context they need to continue after a clarification or a restart. The id
-- is the id of the run that created the agent; an agent of a chat goes
-- with the chat. Timestamps are Unix milliseconds (UTC); JSON documents are
-- TEXT.

-- +goose Up
CREATE TABLE agents (
    id                  TEXT    NOT NULL PRIMARY KEY,
    user_id             TEXT    NOT NULL,
    chat_id             TEXT    REFERENCES chats (id) ON DELETE CASCADE,
    mode                TEXT    NOT NULL,
    task                TEXT    NOT NULL DEFAULT '',
    state               TEXT    NOT NULL CHECK (state IN
        ('inited', 'researching', 'waiting_for_clarification', 'completed', 'failed')),
    iteration           INTEGER NOT NULL DEFAULT 0,
    searches_used       INTEGER NOT NULL DEFAULT 0,
    clarifications_used INTEGER NOT NULL DEFAULT 0,
    sources             TEXT,
    reasoning           TEXT,
    result              TEXT    NOT NULL DEFAULT '',
    result_sources      TEXT,
    error               TEXT    NOT NULL DEFAULT '',
    context             TEXT,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL
) STRICT;

CREATE INDEX agents_user_created_idx ON agents (user_id, created_at DESC, id DESC);
-- Eviction and stale-run checks look agents up by state and age.
CREATE INDEX agents_state_updated_idx ON agents (state, updated_at);

-- +goose Down
DROP TABLE agents;
