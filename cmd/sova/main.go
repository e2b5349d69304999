// Command sova is a self-hosted AI search and research server.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	_ "time/tzdata" // time zones for "current date" in the person's zone, on any host

	"github.com/sova-ai/sova"
	"github.com/sova-ai/sova/internal/isolate"
)

func main() {
	// A worker process started to parse an untrusted file runs its parser
	// here and exits; see internal/isolate.
	isolate.Main()
	// The CLI acts for the local user; every command reads it from its
	// context (userID), as the server's handlers read the request's user.
	ctx := sova.WithUser(context.Background(), sova.User{ID: sova.LocalUserID})
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	err := newRoot().ExecuteContext(ctx)
	stop()
	if err != nil {
		var shown shownError
		if !errors.As(err, &shown) {
			fmt.Fprintln(os.Stderr, "sova:", err)
		}
		os.Exit(1)
	}
}

// userID is the id of the user a command acts for, which main put in its
// context.
func userID(ctx context.Context) string {
	u, _ := sova.UserFrom(ctx)
	return u.ID
}
