package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sova-ai/sova"
)

// runStates are every state a run can be in.
var runStates = []string{sova.RunRunning, sova.RunWaiting, sova.RunCompleted, sova.RunFailed, sova.RunCancelled, sova.RunInterrupted}

// newRunsList is `sova runs list`, which `sova runs` alone runs too.
func newRunsList(parent *cobra.Command) *cobra.Command {
	var (
		limit  int
		asJSON bool
	)
	list := &cobra.Command{
		Use:   "list",
		Short: "List recent runs, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withStore(cmd.Context(), func(st cliStore) error {
				runs, err := recentRuns(cmd.Context(), st, userID(cmd.Context()), limit)
				if err != nil {
					return err
				}
				if asJSON {
					return json.NewEncoder(cmd.OutOrStdout()).Encode(runs)
				}
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tCREATED\tMODE\tSTATE\tQUESTION")
				for _, r := range runs {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.ID, r.CreatedAt.Local().Format("2006-01-02 15:04"), r.Mode, r.State, oneLine(r.Question, 70))
				}
				return tw.Flush()
			})
		},
	}
	for _, c := range []*cobra.Command{list, parent} {
		c.Flags().IntVar(&limit, "limit", 20, "how many runs to list")
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	}
	parent.Args = cobra.NoArgs
	parent.RunE = list.RunE
	return list
}

// recentRuns returns the user's newest runs. The store has no method that
// lists a user's runs, so every state's runs are read and sorted here.
func recentRuns(ctx context.Context, st cliStore, userID string, limit int) ([]sova.Run, error) {
	out := []sova.Run{}
	for _, state := range runStates {
		rs, err := st.RunsInState(ctx, state)
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			if r.UserID == userID {
				out = append(out, r)
			}
		}
	}
	slices.SortFunc(out, func(a, b sova.Run) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), strings.Compare(b.ID, a.ID))
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// findRun returns the run with this id or, for a chat's id, that chat's
// latest run.
func findRun(ctx context.Context, st cliStore, id string) (*sova.Run, error) {
	r, err := st.GetRun(ctx, userID(ctx), id)
	if !errors.Is(err, sova.ErrNotFound) {
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", id, err)
		}
		return r, nil
	}
	r, err = st.LatestRun(ctx, userID(ctx), id)
	switch {
	case err == nil:
		return r, nil
	case !errors.Is(err, sova.ErrNotFound):
		return nil, fmt.Errorf("runs of chat %s: %w", id, err)
	}
	if _, err := st.GetChat(ctx, userID(ctx), id); err == nil {
		return nil, fmt.Errorf("chat %s has no runs", id)
	}
	return nil, fmt.Errorf("no run or chat %s: %w", id, sova.ErrNotFound)
}

// oneLine shortens s to one line of at most n characters.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
