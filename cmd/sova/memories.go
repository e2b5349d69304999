package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sova-ai/sova/internal/app"
	"github.com/sova-ai/sova/internal/memory"
	"github.com/sova-ai/sova/internal/store"
)

func newMemories() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "memories",
		Short: "Manage what Sova remembers for you (the memory mode's memories)",
		Long: `Memories are facts and preferences you asked Sova to remember: the memory
mode saves them with add_memory and finds them with search_memories. They
are kept in the database, or in Supermemory when SUPERMEMORY_API_KEY is set.`,
		Example: `  sova memories add "I live in Kazan and prefer answers in Russian"
  sova memories list
  sova memories list --search tea
  sova memories rm 019a…`,
	}
	cmd.AddCommand(memoriesList(), memoriesAdd(), memoriesRemove())
	return cmd
}

// withMemories opens the store and the memories' back-end only.
func withMemories(ctx context.Context, fn func(memory.Service) error) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	st, err := store.Open(ctx, cfg.DatabaseURL, cfg.DataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	mem, err := app.Memories(cfg, st)
	if err != nil {
		return err
	}
	return fn(mem)
}

func memoriesList() *cobra.Command {
	var query string
	var limit int
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List your memories, newest first, or those matching --search",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withMemories(cmd.Context(), func(mem memory.Service) error {
				list, err := mem.List(cmd.Context(), userID(cmd.Context()), limit)
				if query != "" {
					list, err = mem.Search(cmd.Context(), userID(cmd.Context()), query, max(limit, 20))
				}
				if err != nil {
					return err
				}
				if len(list) == 0 {
					fmt.Fprintln(cmd.ErrOrStderr(), "no memories")
					return nil
				}
				w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "ID\tSAVED\tMEMORY")
				for _, m := range list {
					when := ""
					if !m.CreatedAt.IsZero() {
						when = m.CreatedAt.Local().Format("2006-01-02 15:04")
					}
					fmt.Fprintf(w, "%s\t%s\t%s\n", m.ID, when, strings.ReplaceAll(m.Content, "\n", " "))
				}
				return w.Flush()
			})
		},
	}
	cmd.Flags().StringVar(&query, "search", "", "show the memories that match these words, best first")
	cmd.Flags().IntVar(&limit, "limit", 0, "show at most this many (0: all)")
	return cmd
}

func memoriesAdd() *cobra.Command {
	return &cobra.Command{
		Use:   "add TEXT...",
		Short: "Remember something",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withMemories(cmd.Context(), func(mem memory.Service) error {
				m, err := mem.Add(cmd.Context(), userID(cmd.Context()), strings.Join(args, " "))
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "remembered (%s)\n", m.ID)
				return nil
			})
		},
	}
}

func memoriesRemove() *cobra.Command {
	return &cobra.Command{
		Use:   "rm ID...",
		Short: "Forget memories",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withMemories(cmd.Context(), func(mem memory.Service) error {
				for _, id := range args {
					if err := mem.Delete(cmd.Context(), userID(cmd.Context()), id); err != nil {
						return fmt.Errorf("memory %s: %w", id, err)
					}
				}
				fmt.Fprintf(cmd.OutOrStdout(), "forgot %d\n", len(args))
				return nil
			})
		},
	}
}
