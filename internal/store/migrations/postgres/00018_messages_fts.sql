-- The assistant's knowledge agent searches a user's past chats
-- (SearchMessages): a full-text index of message content. The 'simple'
-- configuration only lower-cases, so one index serves Russian and English;
-- queries match stems as prefixes.

-- +goose Up
CREATE INDEX messages_fts_idx ON messages USING GIN (to_tsvector('simple', content));

-- +goose Down
DROP INDEX messages_fts_idx;
