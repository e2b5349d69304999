-- Runs belong to the node executing them for a lease that the node renews
-- while the run goes on. A node that dies stops renewing; once the lease
-- has passed, another node takes the run over (or, for a mode that cannot
-- continue, marks it interrupted). Runs left running by an older version
-- have no lease (0): the first node to look takes them.

-- +goose Up
ALTER TABLE runs ADD COLUMN node_id TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN lease_until INTEGER NOT NULL DEFAULT 0;
CREATE INDEX runs_running_lease_idx ON runs (lease_until) WHERE state = 'running';

-- +goose Down
DROP INDEX runs_running_lease_idx;
ALTER TABLE runs DROP COLUMN lease_until;
ALTER TABLE runs DROP COLUMN node_id;
