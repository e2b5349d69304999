// Package sova names what Sova is made of: the people it serves, their
// chats and messages, runs and their events, agents, document spaces, the
// sources an answer cites and the tokens it used, and the interfaces of the
// services that keep them. It depends on nothing else in Sova; everything
// else depends on it. Implementations live in packages named after what
// they are built on (store on SQL, spaces on the index, ...).
package sova

import (
	"context"
	"errors"
)

var (
	// ErrNotFound reports something that does not exist or does not
	// belong to the user asking: another user's data looks exactly like that.
	ErrNotFound = errors.New("not found")
	// ErrConflict reports an ID that is already taken.
	ErrConflict = errors.New("already exists")
	// ErrInvalid reports input the store refuses to save (unknown role,
	// malformed JSON, missing user).
	ErrInvalid = errors.New("invalid input")
	// ErrLimit reports a cap on how many of something one person may keep
	// (live share links).
	ErrLimit = errors.New("limit reached")
)

// LocalUserID is the one user of an installation without accounts.
const LocalUserID = "local"

// User is the person a request acts for.
type User struct {
	ID string `json:"id"`
	// Name and Role are set for a signed-in account (account.go) and for
	// an anonymous visitor (RoleAnonymous); the local user of an
	// installation without accounts has the admin role.
	Name string `json:"name,omitempty"`
	Role string `json:"role,omitempty"`
}

type userKey struct{}

// WithUser returns a context that carries the user a request acts for.
func WithUser(ctx context.Context, u User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFrom returns the user the context acts for; ok is false when none
// was set (every request passes through the middleware that sets one, so
// callers treat that as a refusal, never as a default user).
func UserFrom(ctx context.Context) (User, bool) {
	u, ok := ctx.Value(userKey{}).(User)
	return u, ok && u.ID != ""
}
