-- Users' own MCP servers (Streamable HTTP only; the admin's servers are in
-- SOVA_MCP_CONFIG). Headers are a JSON object.

-- +goose Up
CREATE TABLE mcp_servers (
    user_id    text        NOT NULL,
    name       text        NOT NULL,
    url        text        NOT NULL,
    headers    jsonb,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (user_id, name)
);

-- +goose Down
DROP TABLE mcp_servers;
