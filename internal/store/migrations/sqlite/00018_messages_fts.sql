-- The assistant's knowledge agent searches a user's past chats
-- (SearchMessages): a full-text index of message content, ranked by BM25.
-- It indexes the messages table's own rows (external content), kept in
-- step by triggers.

-- +goose Up
CREATE VIRTUAL TABLE messages_fts USING fts5(
    content,
    content = 'messages',
    content_rowid = 'seq',
    tokenize = 'unicode61 remove_diacritics 2'
);

INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');

-- +goose StatementBegin
CREATE TRIGGER messages_fts_ai AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts (rowid, content) VALUES (new.seq, new.content);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_fts_ad AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.seq, old.content);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_fts_au AFTER UPDATE OF content ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.seq, old.content);
    INSERT INTO messages_fts (rowid, content) VALUES (new.seq, new.content);
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER messages_fts_au;
DROP TRIGGER messages_fts_ad;
DROP TRIGGER messages_fts_ai;
DROP TABLE messages_fts;
