package connectors_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/webdav"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/connectors"
	"github.com/sova-ai/sova/internal/spaces"
	"github.com/sova-ai/sova/internal/store"
	"github.com/sova-ai/sova/internal/store/storetest"
)

var admin = sova.User{ID: "anna", Role: sova.RoleAdmin}

type env struct {
	st     *store.DB
	spaces *spaces.Service
	space  *sova.Space
}

func newEnv(t *testing.T) *env {
	t.Helper()
	st := storetest.SQLite(t)
	idx, err := spaces.OpenBleve(filepath.Join(t.TempDir(), "spaces"), spaces.BleveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc := spaces.NewService(st, idx, nil, spaces.Config{}, nil)
	t.Cleanup(func() { _ = svc.Close() })
	sp, err := svc.CreateSpace(t.Context(), admin.ID, "Share", "")
	if err != nil {
		t.Fatal(err)
	}
	return &env{st: st, spaces: svc, space: sp}
}

func (e *env) names(t *testing.T) []string {
	t.Helper()
	docs, err := e.spaces.Documents(t.Context(), admin.ID, e.space.ID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range docs {
		out = append(out, d.Name)
	}
	return out
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// davServer serves dir over WebDAV (golang.org/x/net/webdav) with basic
// authentication, under /remote.php/dav/files/anna/ as Nextcloud does.
func davServer(t *testing.T, dir, user, password string) (string, *atomic.Int64) {
	t.Helper()
	h := &webdav.Handler{Prefix: "/remote.php/dav/files/anna", FileSystem: webdav.Dir(dir), LockSystem: webdav.NewMemLS()}
	requests := new(atomic.Int64) // the syncer reads files in parallel
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != password {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/remote.php/dav/files/anna/", requests
}

// A source kept in sync: new files added, changed ones replaced, deleted
// ones removed; unchanged files are not read again; documents uploaded
// by hand stay. Run against a folder and a real WebDAV server.
func TestSync(t *testing.T) {
	for _, kind := range []string{sova.ConnectorFolder, sova.ConnectorWebDAV} {
		t.Run(kind, func(t *testing.T) {
			e := newEnv(t)
			dir := t.TempDir()
			write(t, dir, "plan.md", "# Plan\n\nThe Orion launch is in May.\n")
			write(t, dir, "notes/budget.txt", "The Orion budget is two million.")
			write(t, dir, "notes/отчёт.md", "# Отчёт\n\nПроект Орион идёт по плану.\n")
			write(t, dir, "image.png", "not a document")
			write(t, dir, ".hidden/secret.md", "hidden")
			svc := connectors.New(e.st, e.spaces, connectors.Config{AllowPrivate: true, Transport: http.DefaultTransport})
			req := connectors.Request{Kind: kind, Location: dir}
			var davRequests *atomic.Int64
			if kind == sova.ConnectorWebDAV {
				var u string
				u, davRequests = davServer(t, dir, "anna", "app-password")
				req = connectors.Request{Kind: kind, Location: u, Username: "anna", Password: "app-password"}
			}
			c, err := svc.Connect(t.Context(), admin, e.space.ID, req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := svc.SyncNow(t.Context(), admin.ID, e.space.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.LastError != "" || got.LastResult.Added != 3 || got.LastSyncAt.IsZero() {
				t.Fatalf("first sync: %+v", got)
			}
			if n := e.names(t); !slices.Equal(n, []string{"notes/budget.txt", "notes/отчёт.md", "plan.md"}) {
				t.Fatalf("documents %v", n)
			}
			hits, err := e.spaces.Search(t.Context(), admin.ID, []string{e.space.ID}, "Орион план", 3)
			if err != nil || len(hits) == 0 || hits[0].Document != "notes/отчёт.md" {
				t.Errorf("search: %+v, %v", hits, err)
			}
			// A document uploaded by hand.
			if _, err := e.spaces.Add(t.Context(), admin.ID, e.space.ID, []spaces.File{spaces.BytesFile("manual.md", []byte("by hand"))}, spaces.AddOptions{}); err != nil {
				t.Fatal(err)
			}

			// Unchanged: nothing is read again.
			before := int64(0)
			if davRequests != nil {
				before = davRequests.Load()
			}
			got, _ = svc.SyncNow(t.Context(), admin.ID, e.space.ID)
			if got.LastResult.Unchanged != 3 || got.LastResult.Added+got.LastResult.Updated+got.LastResult.Removed != 0 {
				t.Errorf("second sync: %+v", got.LastResult)
			}
			if davRequests != nil && davRequests.Load()-before != 3 { // one PROPFIND per folder: /, notes/, .hidden skipped
				t.Errorf("an unchanged share took %d requests", davRequests.Load()-before)
			}

			// Change one file, delete one, add one.
			time.Sleep(10 * time.Millisecond)
			write(t, dir, "plan.md", "# Plan\n\nThe Orion launch moved to July, the crew is ready.\n")
			if err := os.Remove(filepath.Join(dir, "notes", "budget.txt")); err != nil {
				t.Fatal(err)
			}
			write(t, dir, "new.md", "# New\n\nA new file.\n")
			got, _ = svc.SyncNow(t.Context(), admin.ID, e.space.ID)
			r := got.LastResult
			if got.LastError != "" || r.Added != 1 || r.Updated != 1 || r.Removed != 1 || r.Unchanged != 1 {
				t.Errorf("third sync: %+v %q", r, got.LastError)
			}
			if n := e.names(t); !slices.Equal(n, []string{"manual.md", "new.md", "notes/отчёт.md", "plan.md"}) {
				t.Errorf("documents %v", n)
			}
			hits, _ = e.spaces.Search(t.Context(), admin.ID, []string{e.space.ID}, "July crew", 3)
			if len(hits) == 0 || hits[0].Document != "plan.md" {
				t.Errorf("the changed file was not read again: %+v", hits)
			}

			// Disconnected: the documents stay, the connector is gone.
			if err := svc.Disconnect(t.Context(), admin.ID, e.space.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Get(t.Context(), admin.ID, e.space.ID); !errors.Is(err, sova.ErrNotFound) {
				t.Errorf("connector after disconnect: %v", err)
			}
			if len(e.names(t)) != 4 {
				t.Errorf("documents after disconnect: %v", e.names(t))
			}
			_ = c
		})
	}
}

// Connecting checks the source at once and says what is wrong; folders
// are for admins, under the allowed roots; a share's password is never
// part of what the connector shows.
func TestConnectChecks(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	write(t, dir, "a.md", "a")
	dav, _ := davServer(t, dir, "anna", "right")
	svc := connectors.New(e.st, e.spaces, connectors.Config{AllowPrivate: true, Transport: http.DefaultTransport, FolderRoots: []string{dir}})
	ctx := t.Context()

	if _, err := svc.Connect(ctx, admin, e.space.ID, connectors.Request{Kind: "webdav", Location: dav, Username: "anna", Password: "wrong"}); !errors.Is(err, sova.ErrInvalid) ||
		!strings.Contains(err.Error(), "app password") || strings.Contains(err.Error(), "wrong") {
		t.Errorf("wrong password: %v", err)
	}
	if _, err := svc.Connect(ctx, admin, e.space.ID, connectors.Request{Kind: "webdav", Location: strings.Replace(dav, "http://", "http://anna:right@", 1)}); !errors.Is(err, sova.ErrInvalid) {
		t.Errorf("credentials in the URL: %v", err)
	}
	pro := sova.User{ID: admin.ID, Role: sova.RolePro}
	if _, err := svc.Connect(ctx, pro, e.space.ID, connectors.Request{Kind: "folder", Location: dir}); !errors.Is(err, connectors.ErrForbidden) {
		t.Errorf("a pro user connects a server folder: %v", err)
	}
	outside := t.TempDir()
	if _, err := svc.Connect(ctx, admin, e.space.ID, connectors.Request{Kind: "folder", Location: outside}); !errors.Is(err, connectors.ErrForbidden) {
		t.Errorf("folder outside the roots: %v", err)
	}
	// A link inside the root that leads out of it is not followed.
	write(t, outside, "secret.md", "outside secret")
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(dir, "secret.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Connect(ctx, admin, e.space.ID, connectors.Request{Kind: "folder", Location: filepath.Join(dir, "link")}); !errors.Is(err, connectors.ErrForbidden) {
		t.Errorf("a link out of the root: %v", err)
	}
	if _, err := svc.Connect(ctx, admin, e.space.ID, connectors.Request{Kind: "folder", Location: dir}); err != nil {
		t.Fatal(err)
	}
	got, _ := svc.SyncNow(ctx, admin.ID, e.space.ID)
	if n := e.names(t); !slices.Equal(n, []string{"a.md"}) || got.LastResult.Added != 1 {
		t.Errorf("documents %v (%+v): links were followed", n, got.LastResult)
	}

	c, err := svc.Connect(ctx, admin, e.space.ID, connectors.Request{Kind: "webdav", Location: dav, Username: "anna", Password: "right"})
	if err != nil {
		t.Fatal(err)
	}
	if !c.HasPassword || c.Password != "right" {
		t.Errorf("connector %+v", c)
	}
	// Another user's space is not found.
	if _, err := svc.Connect(ctx, sova.User{ID: "boris", Role: sova.RoleAdmin}, e.space.ID, connectors.Request{Kind: "webdav", Location: dav, Username: "anna", Password: "right"}); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("boris connects anna's space: %v", err)
	}
	if _, err := svc.SyncNow(ctx, "boris", e.space.ID); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("boris syncs anna's space: %v", err)
	}
}

// Without SOVA_CONNECTORS_ALLOW_PRIVATE a share on a loopback or private
// address is refused when dialling, with the setting named.
func TestPrivateAddressRefused(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	dav, requests := davServer(t, dir, "anna", "pw")
	svc := connectors.New(e.st, e.spaces, connectors.Config{})
	_, err := svc.Connect(t.Context(), admin, e.space.ID, connectors.Request{Kind: "webdav", Location: dav, Username: "anna", Password: "pw"})
	if !errors.Is(err, sova.ErrInvalid) || !strings.Contains(err.Error(), "SOVA_CONNECTORS_ALLOW_PRIVATE") || requests.Load() != 0 {
		t.Errorf("loopback share: %v (%d requests)", err, requests.Load())
	}
	svc = connectors.New(e.st, e.spaces, connectors.Config{AllowPrivate: true})
	if _, err := svc.Connect(t.Context(), admin, e.space.ID, connectors.Request{Kind: "webdav", Location: dav, Username: "anna", Password: "pw"}); err != nil {
		t.Errorf("allowed: %v", err)
	}
}

// With SOVA_CONNECTORS_ALLOW_PRIVATE on, a share at a cloud
// instance-metadata address is still refused, when connecting and by the
// transport every sync dials through, before any request is sent.
func TestMetadataRefusedWithPrivateAllowed(t *testing.T) {
	e := newEnv(t)
	svc := connectors.New(e.st, e.spaces, connectors.Config{AllowPrivate: true})
	for _, loc := range []string{"http://169.254.169.254/latest/", "http://[fd00:ec2::254]/", "http://metadata.google.internal/dav/", "http://100.100.100.200/"} {
		_, err := svc.Connect(t.Context(), admin, e.space.ID, connectors.Request{Kind: "webdav", Location: loc, Username: "anna", Password: "pw"})
		if !errors.Is(err, sova.ErrInvalid) || !strings.Contains(err.Error(), "metadata") {
			t.Errorf("connect %s with private addresses allowed: %v", loc, err)
		}
		req, _ := http.NewRequestWithContext(t.Context(), "PROPFIND", loc, nil)
		resp, err := connectors.GuardedTransport(true).RoundTrip(req)
		if err == nil {
			_ = resp.Body.Close()
		}
		var blocked *connectors.BlockedError
		if !errors.As(err, &blocked) {
			t.Errorf("transport to %s with private addresses allowed: %v, want a refusal", loc, err)
		}
	}
}

// The periodic sync runs under Start and stops with Stop.
func TestPeriodicSync(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	write(t, dir, "a.md", "# A\n\nalpha")
	svc := connectors.New(e.st, e.spaces, connectors.Config{Interval: time.Hour})
	if _, err := svc.Connect(t.Context(), admin, e.space.ID, connectors.Request{Kind: "folder", Location: dir}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	svc.SyncDue(ctx) // what each round of the loop does
	if n := e.names(t); !slices.Equal(n, []string{"a.md"}) {
		t.Fatalf("documents after SyncDue: %v", n)
	}
	write(t, dir, "b.md", "# B\n\nbeta")
	svc.SyncDue(ctx) // synced within the hour: not due
	if n := e.names(t); len(n) != 1 {
		t.Errorf("synced again before the interval: %v", n)
	}
	svc.Start()
	svc.Stop() // returns once the loop has ended
}
