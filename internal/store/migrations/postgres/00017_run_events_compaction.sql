-- Finished runs' event logs are compacted (their text deltas merged) and,
-- past the retention setting, deleted; a run remembers that its log was
-- compacted so that the sweeper does not read it again.

-- +goose Up
ALTER TABLE runs ADD COLUMN events_compacted integer NOT NULL DEFAULT 0;
CREATE INDEX runs_compaction_idx ON runs (events_compacted, state, updated_at);

-- +goose Down
DROP INDEX runs_compaction_idx;
ALTER TABLE runs DROP COLUMN events_compacted;
