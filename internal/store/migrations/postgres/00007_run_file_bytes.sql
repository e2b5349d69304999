-- Run files hold bytes with a content type: charts (PNG) that code cells
-- draw and report PDFs beside the text files of a run's workspace. Text
-- files keep their content in `content`; a file written as bytes has its
-- bytes in `data` and an empty `content`. Existing rows are text files
-- and read back as before.

-- +goose Up
ALTER TABLE run_files ADD COLUMN data bytea;
ALTER TABLE run_files ADD COLUMN content_type text NOT NULL DEFAULT 'text/markdown; charset=utf-8';

-- +goose Down
ALTER TABLE run_files DROP COLUMN content_type;
ALTER TABLE run_files DROP COLUMN data;
