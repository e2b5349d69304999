-- Share links: a chat readable by anyone with the link (SOVA_SHARE_LINKS).
-- id is the SHA-256 of the link's secret, never the secret itself.

-- +goose Up
CREATE TABLE share_links (
    id         TEXT    NOT NULL PRIMARY KEY,
    chat_id    TEXT    NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    user_id    TEXT    NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX share_links_chat ON share_links (chat_id, created_at);

-- +goose Down
DROP TABLE share_links;
