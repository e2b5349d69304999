-- The assistant's knowledge agent reads a user's newest messages across
-- their chats (RecentMessages).

-- +goose Up
CREATE INDEX messages_created_idx ON messages (created_at DESC, seq DESC);

-- +goose Down
DROP INDEX messages_created_idx;
