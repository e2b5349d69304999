package auth_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/auth"
)

func TestLocal(t *testing.T) {
	var a auth.Authenticator = auth.Local{}
	for _, target := range []string{"/api/chats", "/v1/chat/completions"} {
		r := httptest.NewRequest("GET", target, nil)
		r.Header.Set("Authorization", "Bearer sova_whatever")
		u, err := a.Authenticate(r)
		if err != nil || u.ID != sova.LocalUserID {
			t.Errorf("%s: %+v, %v; want the local user", target, u, err)
		}
	}
}

func TestFunc(t *testing.T) {
	a := auth.Func(func(r *http.Request) (sova.User, error) {
		if id := r.Header.Get("X-User"); id != "" {
			return sova.User{ID: id}, nil
		}
		return sova.User{}, auth.ErrUnauthenticated
	})
	r := httptest.NewRequest("GET", "/", nil)
	if _, err := a.Authenticate(r); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Errorf("no header: %v", err)
	}
	r.Header.Set("X-User", "ann")
	if u, err := a.Authenticate(r); err != nil || u.ID != "ann" {
		t.Errorf("with header: %+v %v", u, err)
	}
}
