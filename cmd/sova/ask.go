package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/sova-ai/sova/internal/app"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/run"
	"github.com/sova-ai/sova/internal/store"
)

func newAsk() *cobra.Command {
	var (
		modeID, chatID, tz string
		asJSON, noSave     bool
	)
	cmd := &cobra.Command{
		Use:   "ask [flags] \"question\"",
		Short: "Ask a question and print the answer with its sources",
		Long: `Ask a question. Progress (rewritten query, each search and its result
count, pages being read) goes to stderr; the answer streams to stdout as
Markdown, followed by the numbered list of the sources it cites.

With --json, stdout carries one JSON event per line instead (the same
events the API streams), for scripts.

The question and answer are kept as a chat (see "sova chats") unless
--no-save is given; --chat continues an earlier chat.`,
		Example: `  sova ask "What is the capital of Australia?" --mode chat
  sova ask --mode search "How did presidents describe the economy in the 1930s?"
  sova ask --mode search --json "Как работает WAL в SQLite?" | jq .type`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			// Logs would mix with the progress display; only problems show.
			logger := newLogger(os.Stderr, "error")
			ctx := cmd.Context()
			a, err := app.New(ctx, cfg, logger)
			if err != nil {
				return err
			}
			defer func() {
				cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				_ = a.Close(cctx)
			}()
			if tz == "" {
				tz = os.Getenv("TZ")
			}
			prep, err := a.Service.Prepare(ctx, run.Request{
				UserID: store.LocalUserID, ChatID: chatID, Mode: modeID, Timezone: tz,
				Messages: []llm.Message{{Role: llm.RoleUser, Content: strings.Join(args, " ")}},
				Persist:  !noSave,
			})
			if err != nil {
				return err
			}
			return ask(ctx, a.Service, prep, cmd.OutOrStdout(), cmd.ErrOrStderr(), asJSON)
		},
	}
	cmd.Flags().StringVarP(&modeID, "mode", "m", "search", "mode: chat, search, deep_search")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON event per line on stdout")
	cmd.Flags().StringVar(&chatID, "chat", "", "continue the chat with this id")
	cmd.Flags().BoolVar(&noSave, "no-save", false, "do not keep the question and answer as a chat")
	cmd.Flags().StringVar(&tz, "timezone", "", "IANA time zone for dates in answers (default $TZ)")
	return cmd
}

// ask runs a prepared question, writing progress to stderr and the answer
// (or NDJSON events) to stdout.
func ask(ctx context.Context, svc *run.Service, prep *run.Prepared, stdout, stderr io.Writer, asJSON bool) error {
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	var sink event.Sink
	var mu sync.Mutex
	if asJSON {
		enc := event.NewNDJSON(out, func() { _ = out.Flush() })
		sink = event.SinkFunc(func(e event.Event) { _ = enc.Emit(e) })
	} else {
		color := false
		if f, ok := stderr.(*os.File); ok {
			color = isTerminal(f) && os.Getenv("NO_COLOR") == ""
		}
		term := event.NewTerminal(stderr, color)
		sink = event.SinkFunc(func(e event.Event) {
			_ = term.Emit(e)
			if e.Type == event.TypeTextDelta {
				mu.Lock()
				_, _ = out.WriteString(e.Text)
				_ = out.Flush()
				mu.Unlock()
			}
		})
		defer term.Close()
	}
	o := svc.Execute(ctx, prep, sink)
	if o.Err != nil {
		if asJSON {
			_ = out.Flush()
		}
		if errors.Is(ctx.Err(), context.Canceled) {
			return errors.New("interrupted")
		}
		return o.Err
	}
	if asJSON {
		return nil
	}
	mu.Lock()
	defer mu.Unlock()
	_, _ = out.WriteString("\n")
	if len(o.Result.Sources) > 0 {
		_, _ = out.WriteString("\n" + sourcesHeading(o.Result.Text) + "\n")
		for _, s := range o.Result.Sources {
			title := s.Title
			if title == "" {
				title = s.URL
			}
			fmt.Fprintf(out, "[%d] %s — %s\n", s.Number, title, s.URL)
		}
	}
	return nil
}

func sourcesHeading(answer string) string {
	for _, r := range answer {
		if r >= 'А' && r <= 'я' {
			return "**Источники**"
		}
	}
	return "**Sources**"
}
