-- Restarts and one run at a time per chat.
--
-- retry_of is the run a run restarts; it is unique, so restarting a run
-- twice (two clicks, two nodes) starts one run, and the second request
-- finds it. origin_id is the first run of a chain of restarts: state a mode
-- keeps under its run's id (an sgr_agent's agent) is found under it.
--
-- At most one run of a chat is running: a second question while one runs is
-- refused. Runs left running by an older version, several in one chat, are
-- all stale (no server runs while the schema migrates): all but the newest
-- are marked interrupted first, and start-up recovery marks the newest.

-- +goose Up
ALTER TABLE runs ADD COLUMN retry_of text NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN origin_id text NOT NULL DEFAULT '';

UPDATE runs SET state = 'interrupted',
    error = 'the server stopped while this ran; restart it with POST /api/runs/' || id || '/restart'
WHERE state = 'running' AND chat_id IS NOT NULL AND EXISTS (
    SELECT 1 FROM runs newer
    WHERE newer.chat_id = runs.chat_id AND newer.state = 'running'
      AND (newer.created_at > runs.created_at OR (newer.created_at = runs.created_at AND newer.id > runs.id)));

CREATE UNIQUE INDEX runs_retry_of_idx ON runs (retry_of) WHERE retry_of <> '';
CREATE INDEX runs_origin_idx ON runs (origin_id) WHERE origin_id <> '';
CREATE UNIQUE INDEX runs_one_running_per_chat_idx ON runs (chat_id) WHERE state = 'running';

-- +goose Down
DROP INDEX runs_one_running_per_chat_idx;
DROP INDEX runs_origin_idx;
DROP INDEX runs_retry_of_idx;
ALTER TABLE runs DROP COLUMN origin_id;
ALTER TABLE runs DROP COLUMN retry_of;
