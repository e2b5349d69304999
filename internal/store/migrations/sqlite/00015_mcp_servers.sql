-- Users' own MCP servers (Streamable HTTP only; the admin's servers are in
-- SOVA_MCP_CONFIG). Headers are a JSON object. Timestamps are Unix
-- milliseconds (UTC).

-- +goose Up
CREATE TABLE mcp_servers (
    user_id    TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    url        TEXT    NOT NULL,
    headers    TEXT,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (user_id, name)
) STRICT;

-- +goose Down
DROP TABLE mcp_servers;
