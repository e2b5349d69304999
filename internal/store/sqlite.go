package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sova-ai/sova"

	"github.com/pressly/goose/v3"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLiteBusyTimeout is how long a connection waits for another writer
// before failing with "database is locked".
const SQLiteBusyTimeout = 10 * time.Second

// SQLite is the Store kept in a single SQLite file (pure Go driver, WAL
// journal). Timestamps are stored as Unix milliseconds.
type SQLite struct {
	db *sql.DB
}

var _ Store = (*SQLite)(nil)

// OpenSQLite opens (creating it and its directory if needed) the SQLite
// database at path and brings its schema up to date.
func OpenSQLite(ctx context.Context, path string) (*SQLite, error) {
	if path == "" {
		return nil, fmt.Errorf("store: open sqlite: %w: empty path", sova.ErrInvalid)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: open sqlite %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("store: open sqlite: create directory: %w", err)
	}
	db, err := sql.Open("sqlite", sqliteDSN(abs))
	if err != nil {
		return nil, fmt.Errorf("store: open sqlite %s: %w", abs, err)
	}
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("store: open sqlite %s: %w", abs, err)
	}
	if err := migrateSQLite(ctx, db); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("store: open sqlite %s: %w", abs, err)
	}
	return &SQLite{db: db}, nil
}

// migrateSQLite applies the migrations, retrying a few times: SQLite has no
// lock goose can hold across migrations, so when two processes open a new
// database at once both may try the same migration. Each migration runs in
// its own transaction, so the loser's attempt rolls back and its retry finds
// the migration applied.
func migrateSQLite(ctx context.Context, db *sql.DB) error {
	const attempts = 5
	var err error
	for i := range attempts {
		if err = migrate(ctx, goose.DialectSQLite3, db, "sqlite"); err == nil {
			return nil
		}
		if i == attempts-1 {
			break
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(time.Duration(i+1) * 50 * time.Millisecond):
		}
	}
	return err
}

// sqliteDSN returns the DSN for the database file at the absolute path abs.
// The settings are DSN parameters, so the driver applies them to every
// connection the pool opens: WAL lets readers run alongside the writer,
// busy_timeout makes writers queue instead of failing, foreign_keys makes
// deleting a chat delete its messages, synchronous=NORMAL is safe with WAL,
// and immediate transactions take the write lock up front so a transaction
// never fails half way when upgrading from read to write.
func sqliteDSN(abs string) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", SQLiteBusyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows drive path: file:///C:/...
	}
	u := url.URL{Scheme: "file", Path: p, RawQuery: q.Encode()}
	return u.String()
}

// Ping checks that the database can be reached.
func (s *SQLite) Ping(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("store: ping sqlite: %w", err)
	}
	return nil
}

// Close closes the database.
func (s *SQLite) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("store: close sqlite: %w", err)
	}
	return nil
}

// CreateChat implements Store.
func (s *SQLite) CreateChat(ctx context.Context, c *sova.Chat) error {
	if err := prepareChat(c, time.Now()); err != nil {
		return fmt.Errorf("store: create chat: %w", err)
	}
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO chats (id, user_id, title, mode, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
		c.ID, c.UserID, c.Title, c.Mode, c.CreatedAt.UnixMilli(), c.UpdatedAt.UnixMilli())
	if err != nil {
		return fmt.Errorf("store: create chat %s: %w", c.ID, sqliteErr(err))
	}
	return nil
}

const sqliteChatColumns = `c.id, c.user_id, c.title, c.mode, c.created_at, c.updated_at,
	(SELECT COUNT(*) FROM messages m WHERE m.chat_id = c.id)`

func scanSQLiteChat(row interface{ Scan(...any) error }) (sova.Chat, error) {
	var (
		c                sova.Chat
		created, updated int64
		messageCount     int64
	)
	if err := row.Scan(&c.ID, &c.UserID, &c.Title, &c.Mode, &created, &updated, &messageCount); err != nil {
		return sova.Chat{}, err
	}
	c.CreatedAt = time.UnixMilli(created).UTC()
	c.UpdatedAt = time.UnixMilli(updated).UTC()
	c.MessageCount = int(messageCount)
	return c, nil
}

// GetChat implements Store.
func (s *SQLite) GetChat(ctx context.Context, userID, chatID string) (*sova.Chat, error) {
	row := s.db.QueryRowContext(ctx,
		`SELECT `+sqliteChatColumns+` FROM chats c WHERE c.id = ? AND c.user_id = ?`, chatID, userID)
	c, err := scanSQLiteChat(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: chat %s: %w", chatID, sova.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get chat %s: %w", chatID, err)
	}
	return &c, nil
}

// ListChats implements Store.
func (s *SQLite) ListChats(ctx context.Context, userID string, limit, offset int) ([]sova.Chat, error) {
	if limit <= 0 {
		limit = -1 // no limit
	}
	offset = max(offset, 0)
	rows, err := s.db.QueryContext(ctx,
		`SELECT `+sqliteChatColumns+` FROM chats c WHERE c.user_id = ?
		ORDER BY c.updated_at DESC, c.id DESC LIMIT ? OFFSET ?`, userID, limit, offset)
	if err != nil {
		return nil, fmt.Errorf("store: list chats: %w", err)
	}
	defer rows.Close()
	chats := []sova.Chat{} // never nil: encodes as [] rather than null
	for rows.Next() {
		c, err := scanSQLiteChat(rows)
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
func (s *SQLite) DeleteChat(ctx context.Context, userID, chatID string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM chats WHERE id = ? AND user_id = ?`, chatID, userID)
	if err != nil {
		return fmt.Errorf("store: delete chat %s: %w", chatID, err)
	}
	if err := oneRow(res); err != nil {
		return fmt.Errorf("store: delete chat %s: %w", chatID, err)
	}
	return nil
}

// SetChatTitle implements Store.
func (s *SQLite) SetChatTitle(ctx context.Context, userID, chatID, title string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE chats SET title = ? WHERE id = ? AND user_id = ?`, title, chatID, userID)
	if err != nil {
		return fmt.Errorf("store: set title of chat %s: %w", chatID, err)
	}
	if err := oneRow(res); err != nil {
		return fmt.Errorf("store: set title of chat %s: %w", chatID, err)
	}
	return nil
}

// oneRow returns ErrNotFound when a statement scoped to one of the user's
// chats matched nothing.
func oneRow(res sql.Result) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("chat %w", sova.ErrNotFound)
	}
	return nil
}

// AddMessage implements Store.
func (s *SQLite) AddMessage(ctx context.Context, userID string, m *sova.Message) error {
	r, err := prepareMessage(m, time.Now())
	if err != nil {
		return fmt.Errorf("store: add message: %w", err)
	}
	if err := s.addMessage(ctx, userID, m, r); err != nil {
		return fmt.Errorf("store: add message %s to chat %s: %w", m.ID, m.ChatID, err)
	}
	return nil
}

func (s *SQLite) addMessage(ctx context.Context, userID string, m *sova.Message, r messageRow) (err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	created := m.CreatedAt.UnixMilli()
	res, err := tx.ExecContext(ctx,
		`UPDATE chats SET updated_at = MAX(updated_at, ?) WHERE id = ? AND user_id = ?`, created, m.ChatID, userID)
	if err != nil {
		return err
	}
	if err := oneRow(res); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO messages (id, chat_id, role, content, parts, sources,
		input_tokens, output_tokens, total_tokens, model, finish_reason, mode, tool_calls, error, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		m.ID, m.ChatID, m.Role, m.Content, sqliteText(r.parts), sqliteText(r.sources),
		r.inputTokens, r.outputTokens, r.totalTokens, m.Model, m.FinishReason, m.Mode,
		sqliteText(r.toolCalls), m.Error, created)
	if err != nil {
		return sqliteErr(err)
	}
	return tx.Commit()
}

// ListMessages implements Store.
func (s *SQLite) ListMessages(ctx context.Context, userID, chatID string) ([]sova.Message, error) {
	if err := s.ownChat(ctx, userID, chatID); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT m.id, m.chat_id, m.role, m.content, m.parts, m.sources,
		m.input_tokens, m.output_tokens, m.total_tokens, m.model, m.finish_reason, m.mode,
		m.tool_calls, m.error, m.created_at
		FROM messages m JOIN chats c ON c.id = m.chat_id
		WHERE m.chat_id = ? AND c.user_id = ?
		ORDER BY m.created_at, m.seq`, chatID, userID)
	if err != nil {
		return nil, fmt.Errorf("store: list messages of chat %s: %w", chatID, err)
	}
	defer rows.Close()
	msgs := []sova.Message{} // never nil: encodes as [] rather than null
	for rows.Next() {
		var (
			m       sova.Message
			r       messageRow
			created int64
		)
		if err := rows.Scan(&m.ID, &m.ChatID, &m.Role, &m.Content, &r.parts, &r.sources,
			&r.inputTokens, &r.outputTokens, &r.totalTokens, &m.Model, &m.FinishReason, &m.Mode,
			&r.toolCalls, &m.Error, &created); err != nil {
			return nil, fmt.Errorf("store: list messages of chat %s: %w", chatID, err)
		}
		m.CreatedAt = time.UnixMilli(created).UTC()
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

// ownChat returns ErrNotFound unless chatID is one of the user's chats.
func (s *SQLite) ownChat(ctx context.Context, userID, chatID string) error {
	var one int
	err := s.db.QueryRowContext(ctx, `SELECT 1 FROM chats WHERE id = ? AND user_id = ?`, chatID, userID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("store: chat %s: %w", chatID, sova.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("store: chat %s: %w", chatID, err)
	}
	return nil
}

// sqliteText binds a JSON document to a TEXT column: a []byte would be bound
// as a BLOB, which the STRICT tables refuse.
func sqliteText(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

// sqliteErr maps a uniqueness violation to ErrConflict, keeping the driver
// error in the chain.
func sqliteErr(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY, sqlite3.SQLITE_CONSTRAINT_UNIQUE:
			return fmt.Errorf("%w: %w", sova.ErrConflict, err)
		}
	}
	return err
}
