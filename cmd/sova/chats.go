package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/sova-ai/sova"
	"github.com/sova-ai/sova/internal/store"
	"github.com/sova-ai/sova/internal/wire"
)

func newChats() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "chats",
		Short: "List, show and delete stored chats",
	}
	var limit int
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List chats, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withStore(cmd.Context(), func(st cliStore) error {
				chats, err := st.ListChats(cmd.Context(), userID(cmd.Context()), limit, 0)
				if err != nil {
					return err
				}
				if asJSON {
					// The same shape as GET /api/chats.
					if chats == nil {
						chats = []sova.Chat{}
					}
					return json.NewEncoder(cmd.OutOrStdout()).Encode(map[string]any{"chats": chats})
				}
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tUPDATED\tMODE\tMESSAGES\tTITLE")
				for _, c := range chats {
					title := c.Title
					if title == "" {
						title = "(untitled)"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", c.ID, c.UpdatedAt.Local().Format("2006-01-02 15:04"), c.Mode, c.MessageCount, title)
				}
				return tw.Flush()
			})
		},
	}
	list.Flags().IntVar(&limit, "limit", 50, "how many chats to list")
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")

	var showJSON bool
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Print a chat's messages with their sources",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd.Context(), func(st cliStore) error {
				chat, err := st.GetChat(cmd.Context(), userID(cmd.Context()), args[0])
				if err != nil {
					return fmt.Errorf("chat %s: %w", args[0], err)
				}
				msgs, err := st.ListMessages(cmd.Context(), userID(cmd.Context()), chat.ID)
				if err != nil {
					return err
				}
				w := cmd.OutOrStdout()
				if showJSON {
					return json.NewEncoder(w).Encode(map[string]any{"chat": chat, "messages": msgs})
				}
				title := chat.Title
				if title == "" {
					title = "(untitled)"
				}
				fmt.Fprintf(w, "# %s\n\n", title)
				for _, m := range msgs {
					fmt.Fprintf(w, "## %s · %s\n\n%s\n", m.Role, m.CreatedAt.Local().Format(time.DateTime), m.Content)
					if m.Error != "" {
						fmt.Fprintf(w, "\n(error: %s)\n", m.Error)
					}
					for _, s := range m.Sources {
						fmt.Fprintf(w, "\n%s", wire.SourceLine(s, answerLanguage(m.Content)))
					}
					if len(m.Sources) > 0 {
						fmt.Fprintln(w)
					}
					fmt.Fprintln(w)
				}
				return nil
			})
		},
	}
	show.Flags().BoolVar(&showJSON, "json", false, "print JSON")

	del := &cobra.Command{
		Use:   "delete ID",
		Short: "Delete a chat and its messages",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd.Context(), func(st cliStore) error {
				if err := st.DeleteChat(cmd.Context(), userID(cmd.Context()), args[0]); err != nil {
					return fmt.Errorf("chat %s: %w", args[0], err)
				}
				fmt.Fprintln(cmd.OutOrStdout(), "deleted", args[0])
				return nil
			})
		},
	}
	cmd.AddCommand(list, show, del)
	return cmd
}

// cliStore is what the chats and runs commands read and delete.
type cliStore interface {
	sova.ChatStore
	sova.RunStore
}

// withStore opens only the store: managing chats needs no model or search.
func withStore(ctx context.Context, fn func(cliStore) error) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	st, err := store.Open(ctx, cfg.DatabaseURL, cfg.DataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(st)
}
