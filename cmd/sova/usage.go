package main

import (
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/limits"
	"github.com/sova-ai/sova/internal/store"
)

// usersUsage prints tokens, searches and runs per user per day.
func usersUsage() *cobra.Command {
	var user string
	var days int
	cmd := &cobra.Command{
		Use:   "usage",
		Short: "Show tokens, searches and runs per user per day",
		Long: `Usage per user and UTC day, newest last: the runs started, the model tokens
and search queries they used, and the messages and long runs the daily limits
counted (read from Redis when SOVA_REDIS_URL is set, where the limits count).
The local user and anonymous visitors are shown by id.`,
		Example: `  sova users usage
  sova users usage --user ann --days 30`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if days < 1 || days > 366 {
				return errors.New("--days is a number from 1 to 366")
			}
			return withAccounts(cmd.Context(), func(st store.Store) error {
				userID := ""
				if user != "" {
					a, err := st.GetAccountByName(cmd.Context(), user)
					if errors.Is(err, sova.ErrNotFound) {
						return fmt.Errorf("no user %q (sova users list shows them)", user)
					}
					if err != nil {
						return err
					}
					userID = a.ID
				}
				// The limits count in Redis when SOVA_REDIS_URL is set.
				var counter limits.Counter
				if cfg, err := loadConfig(); err == nil && cfg.RedisURL != "" {
					rc, err := limits.NewRedis(cmd.Context(), cfg.RedisURL)
					if err != nil {
						return err
					}
					defer rc.Close()
					counter = rc
				}
				rows, err := limits.Report(cmd.Context(), st, userID, days, time.Now(), counter)
				if err != nil {
					return err
				}
				if len(rows) == 0 {
					fmt.Fprintf(cmd.OutOrStdout(), "no usage in the last %d days\n", days)
					return nil
				}
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', tabwriter.AlignRight)
				fmt.Fprintln(tw, "DAY\tUSER\tRUNS\tTOKENS\tSEARCHES\tMESSAGES\tLONG RUNS\t")
				for _, r := range rows {
					name := r.Name
					if name == "" {
						name = r.UserID
					}
					fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t\n", r.Day, name, r.Runs, r.Tokens, r.Searches, r.Messages, r.Extreme)
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().StringVar(&user, "user", "", "only this user")
	cmd.Flags().IntVar(&days, "days", 7, "days to show, today included")
	return cmd
}
