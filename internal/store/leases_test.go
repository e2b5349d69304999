package store_test

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova"
)

// Leases: a run is claimed by one node of many, only once its lease has
// passed, renewed by its node, and released for another to take at once.
func TestRunLeases(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			s := b.newDatabase(t).open(t)
			ctx := t.Context()
			now := time.Now()
			r := &sova.Run{UserID: "ann", Mode: "deep_research", State: sova.RunRunning, Question: "q",
				NodeID: "a", LeaseUntil: now.Add(time.Minute)}
			if err := s.CreateRun(ctx, r); err != nil {
				t.Fatal(err)
			}
			if err := s.ClaimRun(ctx, r.ID, "b", now, now.Add(time.Minute)); !errors.Is(err, sova.ErrConflict) {
				t.Fatalf("claim of a held run: %v, want a conflict", err)
			}
			if orphans, err := s.OrphanedRuns(ctx, "", now); err != nil || len(orphans) != 0 {
				t.Fatalf("orphans while held: %v %v", orphans, err)
			}
			// A run of node a whose executor ended without storing its
			// end: node a does not name it, so its lease is not renewed.
			dead := &sova.Run{UserID: "ann", Mode: "search", State: sova.RunRunning, Question: "q",
				NodeID: "a", LeaseUntil: now.Add(time.Second)}
			if err := s.CreateRun(ctx, dead); err != nil {
				t.Fatal(err)
			}
			// Node a renews; then it stops, and its lease passes.
			held, err := s.RenewLeases(ctx, "a", []string{r.ID, "other"}, now.Add(2*time.Second))
			if err != nil || !slices.Equal(held, []string{r.ID}) {
				t.Fatalf("renew: %v %v", held, err)
			}
			if got, _ := s.GetRun(ctx, "ann", dead.ID); !got.LeaseUntil.Equal(dead.LeaseUntil.Truncate(time.Millisecond)) {
				t.Errorf("a run the node does not execute was renewed: lease %v, want %v", got.LeaseUntil, dead.LeaseUntil)
			}
			if held, err := s.RenewLeases(ctx, "a", nil, now.Add(2*time.Second)); err != nil || len(held) != 0 {
				t.Errorf("renew of no runs: %v %v", held, err)
			}
			dead.State = sova.RunFailed
			if err := s.UpdateRun(ctx, dead); err != nil {
				t.Fatal(err)
			}
			later := now.Add(3 * time.Second)
			if orphans, err := s.OrphanedRuns(ctx, "", later); err != nil || len(orphans) != 1 || orphans[0].NodeID != "a" {
				t.Fatalf("orphans after the lease: %+v %v", orphans, err)
			}
			// Five nodes claim it at once: one gets it.
			var wg sync.WaitGroup
			var mu sync.Mutex
			var won []string
			for _, n := range []string{"b", "c", "d", "e", "f"} {
				wg.Go(func() {
					err := s.ClaimRun(ctx, r.ID, n, later, later.Add(time.Minute))
					if err == nil {
						mu.Lock()
						won = append(won, n)
						mu.Unlock()
					} else if !errors.Is(err, sova.ErrConflict) {
						t.Errorf("claim by %s: %v", n, err)
					}
				})
			}
			wg.Wait()
			if len(won) != 1 {
				t.Fatalf("claimed by %v, want one node", won)
			}
			if held, _ := s.RenewLeases(ctx, "a", []string{r.ID}, later.Add(time.Minute)); len(held) != 0 {
				t.Errorf("the old node still holds %v", held)
			}
			// The new node hands it back: anyone takes it at once.
			if err := s.ReleaseRun(ctx, r.ID, won[0]); err != nil {
				t.Fatal(err)
			}
			if err := s.ClaimRun(ctx, r.ID, "g", later, later.Add(time.Minute)); err != nil {
				t.Fatalf("claim of a released run: %v", err)
			}
			got, _ := s.GetRun(ctx, "ann", r.ID)
			if got.NodeID != "g" || !got.LeaseUntil.After(later) {
				t.Errorf("run after the claim: node %q lease %v", got.NodeID, got.LeaseUntil)
			}
			r.State = sova.RunCompleted
			r.NodeID, r.LeaseUntil = got.NodeID, got.LeaseUntil
			if err := s.UpdateRun(ctx, r); err != nil {
				t.Fatal(err)
			}
			if err := s.ClaimRun(ctx, r.ID, "h", later.Add(time.Hour), later.Add(2*time.Hour)); !errors.Is(err, sova.ErrNotFound) {
				t.Errorf("claim of a completed run: %v, want not found", err)
			}
		})
	}
}
