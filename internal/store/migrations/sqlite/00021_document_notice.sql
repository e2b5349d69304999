-- A document read only in part (a limit cut it) says so to its owner.

-- +goose Up
ALTER TABLE documents ADD COLUMN notice TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE documents DROP COLUMN notice;
