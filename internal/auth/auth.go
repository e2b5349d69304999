// Package auth decides whom a request acts for. The server asks an
// Authenticator once per request and puts the answer in the request's
// context (sova.WithUser); everything after it reads the user from there.
// Today's only implementation is Local, for an installation without
// accounts; sign-in sessions and API keys (#11) are further
// Authenticators, chosen where Sova is assembled (internal/app).
package auth

import (
	"errors"
	"net/http"

	"github.com/sova-ai/sova"
)

// ErrUnauthenticated reports a request that names no user Sova knows: no
// credentials, or credentials that are wrong or expired. The server answers
// it with 401.
var ErrUnauthenticated = errors.New("authentication required")

// Authenticator tells whom a request acts for. It returns
// ErrUnauthenticated (possibly wrapped) when the request carries no valid
// credentials; any other error is a fault of the Authenticator itself (a
// store it could not reach), not of the request.
type Authenticator interface {
	Authenticate(r *http.Request) (sova.User, error)
}

// Func adapts a function to an Authenticator.
type Func func(r *http.Request) (sova.User, error)

// Authenticate calls f.
func (f Func) Authenticate(r *http.Request) (sova.User, error) { return f(r) }

// Local is the Authenticator of an installation without accounts: every
// request acts for its one user, sova.LocalUserID.
type Local struct{}

// Authenticate returns the local user.
func (Local) Authenticate(*http.Request) (sova.User, error) {
	return sova.User{ID: sova.LocalUserID}, nil
}
