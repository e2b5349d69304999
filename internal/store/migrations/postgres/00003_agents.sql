-- Schema-guided reasoning agents (sgr_agent): their state, counters and the
-- context they need to continue after a clarification or a restart. The id
-- is the id of the run that created the agent; an agent of a chat goes
-- with the chat.

-- +goose Up
CREATE TABLE agents (
    id                  text        NOT NULL PRIMARY KEY,
    user_id             text        NOT NULL,
    chat_id             text        REFERENCES chats (id) ON DELETE CASCADE,
    mode                text        NOT NULL,
    task                text        NOT NULL DEFAULT '',
    state               text        NOT NULL CHECK (state IN
        ('inited', 'researching', 'waiting_for_clarification', 'completed', 'failed')),
    iteration           integer     NOT NULL DEFAULT 0,
    searches_used       integer     NOT NULL DEFAULT 0,
    clarifications_used integer     NOT NULL DEFAULT 0,
    sources             jsonb,
    reasoning           jsonb,
    result              text        NOT NULL DEFAULT '',
    result_sources      jsonb,
    error               text        NOT NULL DEFAULT '',
    context             jsonb,
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL
);

CREATE INDEX agents_user_created_idx ON agents (user_id, created_at DESC, id DESC);
-- Eviction and stale-run checks look agents up by state and age.
CREATE INDEX agents_state_updated_idx ON agents (state, updated_at);

-- +goose Down
DROP TABLE agents;
