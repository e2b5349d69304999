package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sova-ai/sova/internal/config"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = ""

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "sova",
		Short: "Self-hosted AI search and research",
		Long: `Sova answers questions from the web with cited sources. It plans searches,
reads the pages and streams back an answer in the language of the question.

It talks to any OpenAI-compatible model endpoint (SOVA_LLM_BASE_URL,
SOVA_LLM_API_KEY or OPENAI_API_KEY, SOVA_MODEL) and web search providers:
out of the box DuckDuckGo and Wikipedia, which need no account; SearXNG
(SOVA_SEARXNG_URL), Tavily, Exa and Brave (TAVILY_API_KEY, EXA_API_KEY,
BRAVE_API_KEY) are used first when configured. Every setting is an
environment variable; see docs/configuration.md.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newServe(), newAsk(), newChats(), newVersion())
	root.AddCommand(newBench())
	root.AddCommand(newRuns())
	root.AddCommand(newSpaces())
	root.AddCommand(newMemories()) // memories.go
	root.AddCommand(newDoctor())
	root.AddCommand(newRead())
	root.AddCommand(newUsers(), newKeys())
	return root
}

func newVersion() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), "sova", versionString())
		},
	}
}

func loadConfig() (*config.Config, error) {
	return config.Load()
}

// newLogger writes structured logs to w at the configured level.
func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	switch strings.ToLower(level) {
	case "debug":
		l = slog.LevelDebug
	case "warn", "warning":
		l = slog.LevelWarn
	case "error":
		l = slog.LevelError
	default:
		l = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
