package store

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/sova-ai/sova"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// Postgres is the Store kept in a PostgreSQL database, in the first schema
// of the connection's search_path.
type Postgres struct {
	pool *pgxpool.Pool
}

var _ Store = (*Postgres)(nil)

// OpenPostgres connects to the PostgreSQL database at databaseURL and brings
// its schema up to date. Servers that start at the same time take turns
// migrating.
func OpenPostgres(ctx context.Context, databaseURL string) (*Postgres, error) {
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("store: open postgres: %w", err)
	}
	if err := migratePostgres(ctx, cfg.ConnConfig.Copy()); err != nil {
		return nil, fmt.Errorf("store: open postgres: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: open postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: open postgres: %w", err)
	}
	return &Postgres{pool: pool}, nil
}

// migratePostgres runs the migrations over database/sql, holding an
// advisory lock named after the database and schema being migrated.
func migratePostgres(ctx context.Context, cc *pgx.ConnConfig) (err error) {
	db := stdlib.OpenDB(*cc)
	defer func() {
		if cerr := db.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close migration connection: %w", cerr)
		}
	}()
	var target string
	if err := db.QueryRowContext(ctx,
		`SELECT current_database() || '.' || coalesce(current_schema(), '')`).Scan(&target); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte("sova store migrations " + target))
	locker, err := lock.NewPostgresSessionLocker(
		lock.WithLockID(int64(h.Sum64())),
		lock.WithLockTimeout(1, 300), // retry every second for up to five minutes
	)
	if err != nil {
		return fmt.Errorf("migration lock: %w", err)
	}
	return migrate(ctx, goose.DialectPostgres, db, "postgres", goose.WithSessionLocker(locker))
}

// Ping checks that the database can be reached.
func (s *Postgres) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("store: ping postgres: %w", err)
	}
	return nil
}

// Close closes the connection pool.
func (s *Postgres) Close() error {
	s.pool.Close()
	return nil
}

// CreateChat implements Store.
func (s *Postgres) CreateChat(ctx context.Context, c *sova.Chat) error {
	if err := prepareChat(c, time.Now()); err != nil {
		return fmt.Errorf("store: create chat: %w", err)
	}
	_, err := s.pool.Exec(ctx,
		`INSERT INTO chats (id, user_id, title, mode, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		c.ID, c.UserID, c.Title, c.Mode, c.CreatedAt, c.UpdatedAt)
	if err != nil {
		return fmt.Errorf("store: create chat %s: %w", c.ID, postgresErr(err))
	}
	return nil
}

const postgresChatColumns = `c.id, c.user_id, c.title, c.mode, c.created_at, c.updated_at,
	(SELECT count(*) FROM messages m WHERE m.chat_id = c.id)`

func scanPostgresChat(row pgx.Row) (sova.Chat, error) {
	var (
		c            sova.Chat
		messageCount int64
	)
	if err := row.Scan(&c.ID, &c.UserID, &c.Title, &c.Mode, &c.CreatedAt, &c.UpdatedAt, &messageCount); err != nil {
		return sova.Chat{}, err
	}
	c.CreatedAt = c.CreatedAt.UTC()
	c.UpdatedAt = c.UpdatedAt.UTC()
	c.MessageCount = int(messageCount)
	return c, nil
}

// GetChat implements Store.
func (s *Postgres) GetChat(ctx context.Context, userID, chatID string) (*sova.Chat, error) {
	row := s.pool.QueryRow(ctx,
		`SELECT `+postgresChatColumns+` FROM chats c WHERE c.id = $1 AND c.user_id = $2`, chatID, userID)
	c, err := scanPostgresChat(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("store: chat %s: %w", chatID, sova.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get chat %s: %w", chatID, err)
	}
	return &c, nil
}

// ListChats implements Store.
func (s *Postgres) ListChats(ctx context.Context, userID string, limit, offset int) ([]sova.Chat, error) {
	var lim *int64 // NULL: no limit
	if limit > 0 {
		l := int64(limit)
		lim = &l
	}
	rows, err := s.pool.Query(ctx,
		`SELECT `+postgresChatColumns+` FROM chats c WHERE c.user_id = $1
		ORDER BY c.updated_at DESC, c.id DESC LIMIT $2 OFFSET $3`, userID, lim, int64(max(offset, 0)))
	if err != nil {
		return nil, fmt.Errorf("store: list chats: %w", err)
	}
	defer rows.Close()
	chats := []sova.Chat{} // never nil: encodes as [] rather than null
	for rows.Next() {
		c, err := scanPostgresChat(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list chats: %w", err)
		}
		chats = append(chats, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list chats: %w", err)
	}
	return chats, nil
}

// DeleteChat implements Store.
func (s *Postgres) DeleteChat(ctx context.Context, userID, chatID string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM chats WHERE id = $1 AND user_id = $2`, chatID, userID)
	if err != nil {
		return fmt.Errorf("store: delete chat %s: %w", chatID, err)
	}
	if err := oneRowTag(tag); err != nil {
		return fmt.Errorf("store: delete chat %s: %w", chatID, err)
	}
	return nil
}

// SetChatTitle implements Store.
func (s *Postgres) SetChatTitle(ctx context.Context, userID, chatID, title string) error {
	tag, err := s.pool.Exec(ctx, `UPDATE chats SET title = $1 WHERE id = $2 AND user_id = $3`, title, chatID, userID)
	if err != nil {
		return fmt.Errorf("store: set title of chat %s: %w", chatID, err)
	}
	if err := oneRowTag(tag); err != nil {
		return fmt.Errorf("store: set title of chat %s: %w", chatID, err)
	}
	return nil
}

// oneRowTag returns ErrNotFound when a statement scoped to one of the
// user's chats matched nothing.
func oneRowTag(tag pgconn.CommandTag) error {
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("chat %w", sova.ErrNotFound)
	}
	return nil
}

// AddMessage implements Store.
func (s *Postgres) AddMessage(ctx context.Context, userID string, m *sova.Message) error {
	r, err := prepareMessage(m, time.Now())
	if err != nil {
		return fmt.Errorf("store: add message: %w", err)
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx,
			`UPDATE chats SET updated_at = greatest(updated_at, $1) WHERE id = $2 AND user_id = $3`,
			m.CreatedAt, m.ChatID, userID)
		if err != nil {
			return err
		}
		if err := oneRowTag(tag); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO messages (id, chat_id, role, content, parts, sources,
			input_tokens, output_tokens, total_tokens, model, finish_reason, mode, tool_calls, error, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
			m.ID, m.ChatID, m.Role, m.Content, r.parts, r.sources,
			r.inputTokens, r.outputTokens, r.totalTokens, m.Model, m.FinishReason, m.Mode,
			r.toolCalls, m.Error, m.CreatedAt)
		return postgresErr(err)
	})
	if err != nil {
		return fmt.Errorf("store: add message %s to chat %s: %w", m.ID, m.ChatID, err)
	}
	return nil
}

// ListMessages implements Store.
func (s *Postgres) ListMessages(ctx context.Context, userID, chatID string) ([]sova.Message, error) {
	var one int
	err := s.pool.QueryRow(ctx, `SELECT 1 FROM chats WHERE id = $1 AND user_id = $2`, chatID, userID).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("store: chat %s: %w", chatID, sova.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: chat %s: %w", chatID, err)
	}
	rows, err := s.pool.Query(ctx, `SELECT m.id, m.chat_id, m.role, m.content, m.parts, m.sources,
		m.input_tokens, m.output_tokens, m.total_tokens, m.model, m.finish_reason, m.mode,
		m.tool_calls, m.error, m.created_at
		FROM messages m JOIN chats c ON c.id = m.chat_id
		WHERE m.chat_id = $1 AND c.user_id = $2
		ORDER BY m.created_at, m.seq`, chatID, userID)
	if err != nil {
		return nil, fmt.Errorf("store: list messages of chat %s: %w", chatID, err)
	}
	defer rows.Close()
	msgs := []sova.Message{} // never nil: encodes as [] rather than null
	for rows.Next() {
		var (
			m sova.Message
			r messageRow
		)
		if err := rows.Scan(&m.ID, &m.ChatID, &m.Role, &m.Content, &r.parts, &r.sources,
			&r.inputTokens, &r.outputTokens, &r.totalTokens, &m.Model, &m.FinishReason, &m.Mode,
			&r.toolCalls, &m.Error, &m.CreatedAt); err != nil {
			return nil, fmt.Errorf("store: list messages of chat %s: %w", chatID, err)
		}
		m.CreatedAt = m.CreatedAt.UTC()
		if err := r.decode(&m); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		msgs = append(msgs, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list messages of chat %s: %w", chatID, err)
	}
	return msgs, nil
}

// postgresErr maps a unique violation to ErrConflict, keeping the driver
// error in the chain.
func postgresErr(err error) error {
	if err == nil {
		return nil
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" { // unique_violation
		return fmt.Errorf("%w: %w", sova.ErrConflict, err)
	}
	return err
}
