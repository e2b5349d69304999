package limits

import (
	"context"
	"fmt"
	"time"

	"github.com/sova-ai/sova"
)

// Day is one user's usage on one UTC day: what runs used (tokens,
// searches, runs) and what the limits counted (messages, extreme).
type Day struct {
	UserID   string `json:"user_id"`
	Name     string `json:"name,omitempty"`
	Day      string `json:"day"`
	Runs     int64  `json:"runs"`
	Tokens   int64  `json:"tokens"`
	Searches int64  `json:"searches"`
	Messages int64  `json:"messages"`
	Extreme  int64  `json:"extreme"`
}

// ReportStore is what Report reads (sova.AccountStore).
type ReportStore interface {
	ListUsage(ctx context.Context, subject, since string) ([]sova.UsageCount, error)
	ListAccounts(ctx context.Context) ([]sova.Account, error)
}

// Report returns usage per user per day for the last days days up to
// now (today included), of one user or everyone for "", oldest day first.
// Accounts are named; other ids (the local user, anonymous visitors) are
// not. counter, when not nil, is where the limits count (Redis when
// SOVA_REDIS_URL is set): the messages and long runs of each day are read
// there, as the limits saw them.
func Report(ctx context.Context, st ReportStore, userID string, days int, now time.Time, counter Counter) ([]Day, error) {
	if days < 1 {
		days = 1
	}
	since := now.UTC().AddDate(0, 0, 1-days).Format(time.DateOnly)
	counts, err := st.ListUsage(ctx, userID, since)
	if err != nil {
		return nil, fmt.Errorf("reading usage: %w", err)
	}
	accounts, err := st.ListAccounts(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading accounts: %w", err)
	}
	names := map[string]string{}
	for _, a := range accounts {
		names[a.ID] = a.Name
	}
	out := []Day{}
	index := map[[2]string]int{}
	for _, c := range counts {
		k := [2]string{c.Period, c.Subject}
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, Day{UserID: c.Subject, Name: names[c.Subject], Day: c.Period})
		}
		d := &out[i]
		switch c.Counter {
		case "runs":
			d.Runs = c.Count
		case "tokens":
			d.Tokens = c.Count
		case "searches":
			d.Searches = c.Count
		case Messages:
			d.Messages = c.Count
		case Extreme:
			d.Extreme = c.Count
		}
	}
	if _, inStore := counter.(StoreCounter); counter != nil && !inStore {
		for i := range out {
			d := &out[i]
			var err error
			if d.Messages, err = counter.Get(ctx, Key{Subject: d.UserID, Counter: Messages, Period: d.Day}); err != nil {
				return nil, fmt.Errorf("reading the limits' counts: %w", err)
			}
			if d.Extreme, err = counter.Get(ctx, Key{Subject: d.UserID, Counter: Extreme, Period: d.Day}); err != nil {
				return nil, fmt.Errorf("reading the limits' counts: %w", err)
			}
		}
	}
	return out, nil
}
