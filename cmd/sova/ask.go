package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/sova-ai/sova"

	"github.com/spf13/cobra"

	"github.com/sova-ai/sova/internal/app"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/lang"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/report"
	"github.com/sova-ai/sova/internal/run"
	"github.com/sova-ai/sova/internal/wire"
)

func newAsk() *cobra.Command {
	var (
		modeID, chatID, tz string
		asJSON, noSave     bool
		spaceRefs          []string // spaces.go
		web                bool
		pdfPath            string
		approve, decline   []string
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
  sova ask --mode search --json "Как работает WAL в SQLite?" | jq .type
  sova ask --mode academic "What do studies say about intermittent fasting?"
  sova ask --mode deep_research --pdf report.pdf "Economy of the USA in the 1930s"`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && len(approve) == 0 && len(decline) == 0 {
				return errors.New("ask needs a question (or --approve / --decline for a waiting run)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			// Logs would mix with the progress display, which reports a
			// failed run itself.
			logger := slog.New(slog.DiscardHandler)
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
			spaceIDs, err := resolveAskSpaces(ctx, a, modeID, spaceRefs)
			if err != nil {
				return err
			}
			var webSearch *bool
			if cmd.Flags().Changed("web") {
				webSearch = &web
			}
			prep, err := a.Service.Prepare(ctx, run.Request{
				ChatID: chatID, Mode: modeID, Timezone: tz,
				Messages: []llm.Message{{Role: llm.RoleUser, Content: strings.Join(args, " ")}},
				Persist:  !noSave,
				Spaces:   spaceIDs, WebSearch: webSearch,
				Approve: approve, Decline: decline,
			})
			if err != nil {
				return err
			}
			question := strings.Join(args, " ")
			return ask(ctx, a.Service, prep, cmd.OutOrStdout(), cmd.ErrOrStderr(), asJSON, pdfPath, lang.Detect(question).Code)
		},
	}
	cmd.Flags().StringVarP(&modeID, "mode", "m", "search", "mode: chat, search, deep_search, deep_research, extreme, sgr_agent, docs, or a search group: web, academic, youtube, reddit, code, x (see docs/modes.md); or the id of a run waiting for answers")
	cmd.Flags().StringArrayVar(&approve, "approve", nil, "approve this held action (its id, as the run listed it) of the waiting run named by --mode or --chat; repeat for more")
	cmd.Flags().StringArrayVar(&decline, "decline", nil, "decline this held action of the waiting run; repeat for more")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON event per line on stdout")
	cmd.Flags().StringVar(&chatID, "chat", "", "continue the chat with this id")
	cmd.Flags().BoolVar(&noSave, "no-save", false, "do not keep the question and answer as a chat")
	cmd.Flags().StringVar(&tz, "timezone", "", "IANA time zone for dates in answers (default $TZ)")
	cmd.Flags().StringVar(&pdfPath, "pdf", "", "also write the report (or the answer with its sources) to this PDF file")
	cmd.Flags().StringArrayVar(&spaceRefs, "space", nil, "also search this document space (name or ID; repeat for more) in search, deep_search and docs")
	cmd.Flags().BoolVar(&web, "web", false, "docs mode: let the agent search the web too (--web=false to forbid; default SOVA_DOCS_WEB_SEARCH)")
	return cmd
}

// ask runs a prepared question, writing progress to stderr (in language,
// the question's) and the answer (or NDJSON events) to stdout.
func ask(ctx context.Context, svc *run.Service, prep *run.Prepared, stdout, stderr io.Writer, asJSON bool, pdfPath, language string) error {
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	var sink event.Sink
	var mu sync.Mutex
	// lineOpen: the answer's last line has no newline yet. On a terminal
	// stdout and stderr share the screen, so a progress line printed then
	// (the closing "✓ Done") would be glued to the answer's end.
	lineOpen := false
	endLine := func() {
		if lineOpen {
			_, _ = out.WriteString("\n")
			_ = out.Flush()
			lineOpen = false
		}
	}
	if asJSON {
		enc := wire.NewNDJSON(out, func() { _ = out.Flush() })
		sink = event.SinkFunc(func(e event.Event) { _ = enc.Emit(e) })
	} else {
		color := false
		if f, ok := stderr.(*os.File); ok {
			color = isTerminal(f) && os.Getenv("NO_COLOR") == ""
		}
		term := wire.NewTerminal(stderr, color)
		term.SetLanguage(language)
		sink = event.SinkFunc(func(e event.Event) {
			mu.Lock()
			defer mu.Unlock()
			if e.Type == event.TypeTextDelta {
				if e.Text != "" {
					_, _ = out.WriteString(e.Text)
					_ = out.Flush()
					lineOpen = !strings.HasSuffix(e.Text, "\n")
				}
				return
			}
			if e.Type == event.TypeFinish || e.Type == event.TypeError || e.Type == event.TypeStatus {
				endLine()
			}
			_ = term.Emit(e)
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
		if !asJSON {
			// The progress display has shown the error already.
			return shownError{o.Err}
		}
		return o.Err
	}
	if pdfPath != "" && o.State == sova.RunCompleted {
		if err := writePDF(pdfPath, o.Result); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "PDF written to %s\n", pdfPath)
	}
	if asJSON {
		return nil
	}
	mu.Lock()
	defer mu.Unlock()
	endLine()
	if o.State == sova.RunWaiting {
		// The run waits for answers; the next message in the chat (or to
		// the run, when the chat is not kept) continues it.
		target := "--chat " + o.ChatID + " --mode " + prep.ModeID()
		if o.ChatID == "" || !prep.Persisted() {
			target = "--mode " + o.RunID
		}
		if o.Result != nil && o.Result.Pause != nil && len(o.Result.Pause.Actions) > 0 {
			// Actions are held until the person approves them (the list
			// above is Sova's, built from the held calls).
			ids := o.Result.Pause.Actions
			fmt.Fprintf(stderr, "\nNothing was done yet: Sova waits for your decision about %d action(s): %s\nApprove them with:\n  sova ask %s --approve %s\nor do nothing with:\n  sova ask %s --decline %s\n",
				len(ids), strings.Join(ids, ", "), target, strings.Join(ids, " --approve "), target, strings.Join(ids, " --decline "))
			return nil
		}
		fmt.Fprintf(stderr, "\nSova needs your answers to go on. Reply with:\n  sova ask %s \"your answers\"\n", target)
		return nil
	}
	// A report ends with its own list of sources.
	if len(o.Result.Sources) > 0 && o.Result.Report == "" {
		_, _ = out.WriteString("\n" + sourcesHeading(o.Result.Text) + "\n")
		for _, s := range o.Result.Sources {
			line := wire.SourceLine(s, answerLanguage(o.Result.Text))
			if len(s.Passages) > 0 {
				// A long page was read in part: the sections read.
				line += " (read: " + strings.Join(s.Passages, "; ") + ")"
			}
			fmt.Fprintln(out, line)
		}
	}
	return nil
}

func sourcesHeading(answer string) string {
	if answerLanguage(answer) == "ru" {
		return "**Источники**"
	}
	return "**Sources**"
}

// answerLanguage is "ru" for an answer with Cyrillic letters, else "en".
func answerLanguage(answer string) string {
	for _, r := range answer {
		if r >= 'А' && r <= 'я' {
			return "ru"
		}
	}
	return "en"
}

// writePDF renders the run's report, or for modes without one the answer
// with its numbered sources, to a PDF file.
func writePDF(path string, res *mode.Result) error {
	md := res.Report
	if md == "" {
		var b strings.Builder
		b.WriteString(res.Text)
		if len(res.Sources) > 0 {
			b.WriteString("\n\n## " + strings.Trim(sourcesHeading(res.Text), "*") + "\n\n")
			for _, s := range res.Sources {
				fmt.Fprintf(&b, "%d. [%s](%s)", s.Number, s.Title, s.URL)
				if s.SnippetOnly {
					b.WriteString(" " + wire.SnippetOnlyNote(answerLanguage(res.Text)))
				}
				b.WriteString("\n")
			}
		}
		md = b.String()
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing the PDF: %w", err)
	}
	if err := report.PDF(f, md, report.Options{Date: time.Now()}); err != nil {
		_ = f.Close()
		_ = os.Remove(path)
		return fmt.Errorf("rendering the PDF: %w", err)
	}
	return f.Close()
}

// shownError is a failure the terminal display has already reported: the
// command exits non-zero without printing it a second time.
type shownError struct{ err error }

func (e shownError) Error() string { return e.err.Error() }
func (e shownError) Unwrap() error { return e.err }
