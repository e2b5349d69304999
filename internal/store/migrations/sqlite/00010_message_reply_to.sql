-- Every answer names the question it answers: reply_to is the id of the
-- user message an assistant message replies to ('' for questions, and for
-- answers stored before this column existed).

-- +goose Up
ALTER TABLE messages ADD COLUMN reply_to TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE messages DROP COLUMN reply_to;
