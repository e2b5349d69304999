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

	"github.com/sova-ai/sova/internal/isolate"
)

func main() {
	// A worker process started to parse an untrusted file runs its parser
	// here and exits; see internal/isolate.
	isolate.Main()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
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
