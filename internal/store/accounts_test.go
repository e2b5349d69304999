package store_test

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sova-ai/sova"
)

func TestAccountsContract(t *testing.T) {
	tests := []struct {
		name string
		test func(t *testing.T, db database)
	}{
		{"Accounts", testAccounts},
		{"Sessions", testSessions},
		{"APIKeys", testAPIKeys},
		{"UsageCounters", testUsageCounters},
		{"ListUsage", testListUsage},
		{"Settings", testSettings},
		{"Identities", testIdentities},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					t.Parallel()
					tt.test(t, b.newDatabase(t))
				})
			}
		})
	}
}

func testAccounts(t *testing.T, db database) {
	s := db.open(t)
	ctx := t.Context()
	if n, err := s.CountAccounts(ctx); err != nil || n != 0 {
		t.Fatalf("CountAccounts on an empty store = %d, %v", n, err)
	}
	ann := &sova.Account{Name: "ann", Role: sova.RoleAdmin, PasswordHash: "$argon2id$x"}
	if err := s.CreateAccount(ctx, ann); err != nil {
		t.Fatal(err)
	}
	if ann.ID == "" || ann.CreatedAt.IsZero() {
		t.Fatalf("created %+v", ann)
	}
	if err := s.CreateAccount(ctx, &sova.Account{Name: "ann", Role: sova.RoleFree}); !errors.Is(err, sova.ErrConflict) {
		t.Errorf("same name again: %v, want ErrConflict", err)
	}
	if err := s.CreateAccount(ctx, &sova.Account{Name: "Ann", Role: sova.RoleFree}); err != nil {
		t.Errorf("names differ by case: %v", err)
	}
	if err := s.CreateAccount(ctx, &sova.Account{Name: "bob", Role: "root"}); !errors.Is(err, sova.ErrInvalid) {
		t.Errorf("unknown role: %v", err)
	}
	got, err := s.GetAccountByName(ctx, "ann")
	if err != nil || *got != *ann {
		t.Fatalf("GetAccountByName = %+v, %v; want %+v", got, err, ann)
	}
	if got, err := s.GetAccount(ctx, ann.ID); err != nil || *got != *ann {
		t.Fatalf("GetAccount = %+v, %v", got, err)
	}
	if _, err := s.GetAccount(ctx, "nobody"); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}
	if _, err := s.GetAccountByName(ctx, "nobody"); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("unknown name: %v", err)
	}
	if err := s.SetPassword(ctx, ann.ID, "$argon2id$y"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetRole(ctx, ann.ID, sova.RolePro); err != nil {
		t.Fatal(err)
	}
	if err := s.SetRole(ctx, ann.ID, "god"); !errors.Is(err, sova.ErrInvalid) {
		t.Errorf("SetRole to an unknown role: %v", err)
	}
	if err := s.SetDisabled(ctx, ann.ID, true); err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetAccount(ctx, ann.ID)
	if got.PasswordHash != "$argon2id$y" || got.Role != sova.RolePro || !got.Disabled {
		t.Errorf("after changes: %+v", got)
	}
	if err := s.SetPassword(ctx, "nobody", "x"); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("SetPassword of nobody: %v", err)
	}
	list, err := s.ListAccounts(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "Ann" || list[1].Name != "ann" {
		t.Fatalf("ListAccounts = %+v, %v", list, err)
	}
	if n, _ := s.CountAccounts(ctx); n != 2 {
		t.Errorf("CountAccounts = %d", n)
	}

	// Deleting an account takes its sessions and keys with it.
	sess := &sova.Session{ID: "h1", UserID: ann.ID, ExpiresAt: time.Now().Add(time.Hour)}
	key := &sova.APIKey{UserID: ann.ID, Prefix: "sova_ab", Hash: "kh1"}
	if err := s.CreateSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateAPIKey(ctx, key); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteAccount(ctx, ann.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetSession(ctx, "h1"); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("session after the account went: %v", err)
	}
	if _, err := s.GetAPIKeyByHash(ctx, "kh1"); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("key after the account went: %v", err)
	}
	if err := s.DeleteAccount(ctx, ann.ID); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("deleting twice: %v", err)
	}
}

func testSessions(t *testing.T, db database) {
	s := db.open(t)
	ctx := t.Context()
	a := &sova.Account{Name: "ann", Role: sova.RoleFree}
	if err := s.CreateAccount(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateSession(ctx, &sova.Session{ID: "x", UserID: "nobody", ExpiresAt: time.Now().Add(time.Hour)}); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("a session of nobody: %v, want ErrNotFound", err)
	}
	if err := s.CreateSession(ctx, &sova.Session{UserID: a.ID}); !errors.Is(err, sova.ErrInvalid) {
		t.Errorf("a session without id: %v", err)
	}
	now := time.Now()
	live := &sova.Session{ID: "live", UserID: a.ID, ExpiresAt: now.Add(time.Hour)}
	old := &sova.Session{ID: "old", UserID: a.ID, CreatedAt: now.Add(-2 * time.Hour), ExpiresAt: now.Add(-time.Hour)}
	for _, ss := range []*sova.Session{live, old} {
		if err := s.CreateSession(ctx, ss); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.GetSession(ctx, "live")
	if err != nil || *got != *live {
		t.Fatalf("GetSession = %+v, %v; want %+v", got, err, live)
	}
	later := now.Add(time.Minute)
	if err := s.TouchSession(ctx, "live", later); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetSession(ctx, "live"); !got.LastSeenAt.Equal(later.UTC().Truncate(time.Millisecond)) {
		t.Errorf("last seen %v, want %v", got.LastSeenAt, later)
	}
	if n, err := s.DeleteExpiredSessions(ctx, now); err != nil || n != 1 {
		t.Errorf("DeleteExpiredSessions = %d, %v", n, err)
	}
	if err := s.DeleteSession(ctx, "live"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSession(ctx, "live"); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("deleting twice: %v", err)
	}
	for i := range 3 {
		if err := s.CreateSession(ctx, &sova.Session{ID: fmt.Sprint("s", i), UserID: a.ID, ExpiresAt: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.DeleteSessions(ctx, a.ID); err != nil || n != 3 {
		t.Errorf("DeleteSessions = %d, %v", n, err)
	}
}

func testAPIKeys(t *testing.T, db database) {
	s := db.open(t)
	ctx := t.Context()
	ann := &sova.Account{Name: "ann", Role: sova.RolePro}
	bob := &sova.Account{Name: "bob", Role: sova.RoleFree}
	for _, a := range []*sova.Account{ann, bob} {
		if err := s.CreateAccount(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	k1 := &sova.APIKey{UserID: ann.ID, Prefix: "sova_1111", Hash: "h1", CreatedAt: time.Now().Add(-time.Minute)}
	k2 := &sova.APIKey{UserID: bob.ID, Prefix: "sova_2222", Hash: "h2"}
	for _, k := range []*sova.APIKey{k1, k2} {
		if err := s.CreateAPIKey(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateAPIKey(ctx, &sova.APIKey{UserID: bob.ID, Prefix: "sova_3", Hash: "h2"}); !errors.Is(err, sova.ErrConflict) {
		t.Errorf("same hash twice: %v", err)
	}
	got, err := s.GetAPIKeyByHash(ctx, "h1")
	if err != nil || *got != *k1 || !got.LastUsedAt.IsZero() || !got.RevokedAt.IsZero() {
		t.Fatalf("GetAPIKeyByHash = %+v, %v; want %+v", got, err, k1)
	}
	used := time.Now()
	if err := s.TouchAPIKey(ctx, k1.ID, used); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeAPIKey(ctx, k1.ID); err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetAPIKeyByHash(ctx, "h1")
	if !got.LastUsedAt.Equal(used.UTC().Truncate(time.Millisecond)) || got.RevokedAt.IsZero() {
		t.Errorf("after use and revocation: %+v", got)
	}
	first := got.RevokedAt
	time.Sleep(2 * time.Millisecond)
	if err := s.RevokeAPIKey(ctx, k1.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetAPIKeyByHash(ctx, "h1"); !got.RevokedAt.Equal(first) {
		t.Errorf("revoking again moved the time: %v → %v", first, got.RevokedAt)
	}
	if err := s.RevokeAPIKey(ctx, "nope"); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("revoke unknown: %v", err)
	}
	all, err := s.ListAPIKeys(ctx, "")
	if err != nil || len(all) != 2 || all[0].ID != k1.ID || all[1].ID != k2.ID {
		t.Errorf("ListAPIKeys(all) = %+v, %v", all, err)
	}
	mine, err := s.ListAPIKeys(ctx, bob.ID)
	if err != nil || len(mine) != 1 || mine[0].ID != k2.ID {
		t.Errorf("ListAPIKeys(bob) = %+v, %v", mine, err)
	}
}

func testUsageCounters(t *testing.T, db database) {
	s := db.open(t)
	ctx := t.Context()
	if n, err := s.Usage(ctx, "ann", "messages", "2025-01-31"); err != nil || n != 0 {
		t.Fatalf("Usage of nothing = %d, %v", n, err)
	}
	for i := int64(1); i <= 3; i++ {
		n, ok, err := s.AddUsage(ctx, "ann", "messages", "2025-01-31", 1, 3)
		if err != nil || !ok || n != i {
			t.Fatalf("AddUsage #%d = %d, %v, %v", i, n, ok, err)
		}
	}
	if n, ok, err := s.AddUsage(ctx, "ann", "messages", "2025-01-31", 1, 3); err != nil || ok || n != 3 {
		t.Errorf("over the limit = %d, %v, %v; want 3, false", n, ok, err)
	}
	if n, ok, err := s.AddUsage(ctx, "ann", "messages", "2025-02-01", 5, 3); err != nil || ok || n != 0 {
		t.Errorf("more than the limit at once = %d, %v, %v", n, ok, err)
	}
	if n, ok, err := s.AddUsage(ctx, "ann", "extreme", "2025-01-31", 7, -1); err != nil || !ok || n != 7 {
		t.Errorf("no limit = %d, %v, %v", n, ok, err)
	}
	if n, _ := s.Usage(ctx, "ann", "messages", "2025-01-31"); n != 3 {
		t.Errorf("Usage = %d", n)
	}

	// Concurrent requests never take the counter over its limit.
	var wg sync.WaitGroup
	var granted atomic.Int64
	for range 20 {
		wg.Go(func() {
			_, ok, err := s.AddUsage(ctx, "bob", "messages", "2025-01-31", 1, 5)
			if err != nil {
				t.Errorf("AddUsage: %v", err)
			}
			if ok {
				granted.Add(1)
			}
		})
	}
	wg.Wait()
	if granted.Load() != 5 {
		t.Errorf("granted %d of 20 concurrent requests, want 5", granted.Load())
	}
	if n, err := s.DeleteUsageBefore(ctx, "2025-02-01"); err != nil || n != 3 {
		t.Errorf("DeleteUsageBefore = %d, %v", n, err)
	}
}

func testListUsage(t *testing.T, db database) {
	s := db.open(t)
	ctx := t.Context()
	for _, c := range []sova.UsageCount{
		uc("ann", "tokens", "2025-01-30", 500), uc("ann", "runs", "2025-01-31", 2), uc("bob", "messages", "2025-01-31", 3),
		uc("ann", "tokens", "2025-01-31", 1200),
	} {
		if _, _, err := s.AddUsage(ctx, c.Subject, c.Counter, c.Period, c.Count, -1); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.ListUsage(ctx, "", "2025-01-31")
	want := []sova.UsageCount{uc("ann", "runs", "2025-01-31", 2), uc("ann", "tokens", "2025-01-31", 1200), uc("bob", "messages", "2025-01-31", 3)}
	if err != nil || fmt.Sprint(all) != fmt.Sprint(want) {
		t.Errorf("ListUsage(all, since 31st) = %v, %v; want %v", all, err, want)
	}
	ann, err := s.ListUsage(ctx, "ann", "2025-01-01")
	if err != nil || len(ann) != 3 || ann[0].Period != "2025-01-30" {
		t.Errorf("ListUsage(ann) = %v, %v", ann, err)
	}
	if none, err := s.ListUsage(ctx, "carl", ""); err != nil || none == nil || len(none) != 0 {
		t.Errorf("ListUsage(nobody) = %#v, %v", none, err)
	}
}

func testSettings(t *testing.T, db database) {
	s := db.open(t)
	ctx := t.Context()
	if got, err := s.UserSettings(ctx, "ann"); err != nil || !reflect.DeepEqual(got, sova.UserSettings{}) {
		t.Fatalf("settings never saved = %+v, %v; want the zero value", got, err)
	}
	ann := sova.UserSettings{CustomInstructions: "Answer briefly.\nCite papers.", Language: "ru", TimeZone: "Europe/Moscow",
		Model: "gpt-4o", Preferences: map[string]string{"units": "metric"}}
	if err := s.PutUserSettings(ctx, "ann", ann); err != nil {
		t.Fatal(err)
	}
	if err := s.PutUserSettings(ctx, "bob", sova.UserSettings{Language: "en"}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.UserSettings(ctx, "ann"); err != nil || !reflect.DeepEqual(got, ann) {
		t.Errorf("ann's settings = %+v, %v; want %+v", got, err, ann)
	}
	ann.Preferences, ann.CustomInstructions = nil, ""
	if err := s.PutUserSettings(ctx, "ann", ann); err != nil {
		t.Fatal(err)
	}
	if got, err := s.UserSettings(ctx, "ann"); err != nil || !reflect.DeepEqual(got, ann) {
		t.Errorf("replaced settings = %+v, %v; want %+v", got, err, ann)
	}
	if got, _ := s.UserSettings(ctx, "bob"); got.Language != "en" || got.TimeZone != "" {
		t.Errorf("bob's settings = %+v", got)
	}
	if err := s.PutUserSettings(ctx, "", ann); !errors.Is(err, sova.ErrInvalid) {
		t.Errorf("settings without a user: %v", err)
	}
	// Deleting an account deletes its settings.
	acc := &sova.Account{Name: "carl", Role: sova.RoleFree}
	if err := s.CreateAccount(ctx, acc); err != nil {
		t.Fatal(err)
	}
	if err := s.PutUserSettings(ctx, acc.ID, sova.UserSettings{Language: "de"}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteAccount(ctx, acc.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.UserSettings(ctx, acc.ID); got.Language != "" {
		t.Errorf("settings outlived their account: %+v", got)
	}
}

func testIdentities(t *testing.T, db database) {
	s := db.open(t)
	ctx := t.Context()
	const iss = "https://id.example"
	if _, err := s.GetAccountByIdentity(ctx, iss, "sub-1"); !errors.Is(err, sova.ErrNotFound) {
		t.Fatalf("unknown identity: %v", err)
	}
	a := &sova.Account{Name: "jane", Role: sova.RoleFree}
	if err := s.CreateAccountWithIdentity(ctx, a, iss, "sub-1"); err != nil || a.ID == "" {
		t.Fatalf("create: %+v %v", a, err)
	}
	got, err := s.GetAccountByIdentity(ctx, iss, "sub-1")
	if err != nil || got.ID != a.ID || got.Name != "jane" {
		t.Errorf("by identity = %+v, %v", got, err)
	}
	if _, err := s.GetAccountByIdentity(ctx, "https://other.example", "sub-1"); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("same subject, other issuer: %v", err)
	}
	// A taken name or a linked identity creates nothing.
	if err := s.CreateAccountWithIdentity(ctx, &sova.Account{Name: "jane", Role: sova.RoleFree}, iss, "sub-2"); !errors.Is(err, sova.ErrConflict) {
		t.Errorf("taken name: %v", err)
	}
	if _, err := s.GetAccountByIdentity(ctx, iss, "sub-2"); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("a failed creation linked its identity: %v", err)
	}
	if err := s.CreateAccountWithIdentity(ctx, &sova.Account{Name: "jane2", Role: sova.RoleFree}, iss, "sub-1"); !errors.Is(err, sova.ErrConflict) {
		t.Errorf("linked identity: %v", err)
	}
	if _, err := s.GetAccountByName(ctx, "jane2"); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("a failed creation left its account: %v", err)
	}
	if err := s.DeleteAccount(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetAccountByIdentity(ctx, iss, "sub-1"); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("identity outlived its account: %v", err)
	}
}

func uc(subject, counter, period string, n int64) sova.UsageCount {
	return sova.UsageCount{Subject: subject, Counter: counter, Period: period, Count: n}
}
