package main

import (
	"bytes"
	"context"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/store/storetest"
)

// run runs sova with extra variables and stdin.
func (w *world) run(t *testing.T, env []string, stdin string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Env = append(w.env(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	return o.String(), e.String(), err
}

func TestUsersAndKeys(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			w := newWorld(t)
			var env []string
			if engine == "postgres" {
				env = append(env, "SOVA_DATABASE_URL="+storetest.PostgresDSN(t))
			}
			sova := func(stdin string, args ...string) (string, string) {
				t.Helper()
				out, errOut, err := w.run(t, env, stdin, args...)
				if err != nil {
					t.Fatalf("sova %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
				}
				return out, errOut
			}
			fails := func(want string, args ...string) {
				t.Helper()
				out, errOut, err := w.run(t, env, "", args...)
				if err == nil || !strings.Contains(out+errOut, want) {
					t.Errorf("sova %s: %v %q, want an error saying %q", strings.Join(args, " "), err, out+errOut, want)
				}
			}
			out, _ := sova("", "users", "list")
			if !strings.Contains(out, "no users yet") {
				t.Errorf("empty list: %q", out)
			}
			out, _ = sova("", "users", "add", "ann", "--role", "admin")
			pw := regexp.MustCompile(`password: (\S+)`).FindStringSubmatch(out)
			if pw == nil || len(pw[1]) < 16 {
				t.Fatalf("no one-time password: %q", out)
			}
			out, _ = sova("bob's secret\n", "users", "add", "bob", "--role", "pro", "--password-stdin")
			if strings.Contains(out, "password:") || strings.Contains(out, "bob's secret") {
				t.Errorf("a password from stdin was printed: %q", out)
			}
			fails("already exists", "users", "add", "bob")
			fails("--role", "users", "add", "cy", "--role", "root")
			fails("letters, digits", "users", "add", "bad name")
			out, _ = sova("", "users", "list")
			if !strings.Contains(out, "ann") || !strings.Contains(out, "admin") || !strings.Contains(out, "pro") {
				t.Errorf("list: %q", out)
			}
			sova("new secret!\n", "users", "passwd", "bob", "--password-stdin")
			fails("at least 8", "users", "passwd", "bob", "--password-stdin")

			key, errOut := sova("", "keys", "create", "--user", "bob")
			key = strings.TrimSpace(key)
			if !regexp.MustCompile(`^sova_[A-Za-z0-9_-]{43}$`).MatchString(key) || !strings.Contains(errOut, "shown once") {
				t.Fatalf("keys create: %q %q", key, errOut)
			}
			sova("", "keys", "create", "--user", "ann")
			out, _ = sova("", "keys", "list", "--user", "bob")
			if !strings.Contains(out, key[:13]) || strings.Contains(out, key) || !strings.Contains(out, "never") {
				t.Errorf("keys list: %q", out)
			}
			if all, _ := sova("", "keys", "list"); strings.Count(all, "sova_") != 2 {
				t.Errorf("keys list (all): %q", all)
			}

			// The server takes the key, and refuses it once revoked.
			if engine == "sqlite" {
				s := w.serve(t)
				get := func(tok string) int {
					req, _ := http.NewRequest("GET", s.url+"/api/chats", nil)
					if tok != "" {
						req.Header.Set("Authorization", "Bearer "+tok)
					}
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					return resp.StatusCode
				}
				if c := get(""); c != 401 {
					t.Errorf("without a key: %d", c)
				}
				if c := get(key); c != 200 {
					t.Errorf("with the key: %d", c)
				}
				sova("", "keys", "revoke", key[:13])
				if c := get(key); c != 401 {
					t.Errorf("revoked key: %d", c)
				}
				s.stop(t, syscall.SIGTERM)
			} else {
				sova("", "keys", "revoke", key[:13])
			}
			out, _ = sova("", "keys", "list", "--user", "bob")
			if !strings.Contains(out, "revoked") {
				t.Errorf("after revoke: %q", out)
			}
			fails("no API key", "keys", "revoke", "sova_nothing")
			sova("", "users", "rm", "bob")
			fails("not found", "users", "rm", "bob")
			if out, _ := sova("", "keys", "list"); strings.Count(out, "sova_") != 1 {
				t.Errorf("bob's key outlived bob: %q", out)
			}
		})
	}
}

// `sova users usage` shows what `sova ask` used, per user and day.
func TestUsersUsage(t *testing.T) {
	w := newWorld(t)
	if out, errOut, err := w.sova(t, "ask", "--mode", "search", "How did presidents describe the economy in the 1930s?"); err != nil {
		t.Fatalf("ask: %v\n%s%s", err, out, errOut)
	}
	out, errOut, err := w.sova(t, "users", "usage", "--days", "2")
	if err != nil {
		t.Fatalf("usage: %v %s", err, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	today := time.Now().UTC().Format(time.DateOnly)
	if len(lines) != 2 || !strings.Contains(lines[0], "TOKENS") {
		t.Fatalf("usage:\n%s", out)
	}
	f := strings.Fields(lines[1])
	if len(f) != 7 || f[0] != today || f[1] != "local" || f[2] != "1" || f[3] == "0" || f[4] == "0" {
		t.Errorf("row %q; want today, local, 1 run, tokens and searches", lines[1])
	}
	if _, errOut, err := w.sova(t, "users", "usage", "--user", "nobody"); err == nil || !strings.Contains(errOut, `no user "nobody"`) {
		t.Errorf("unknown user: %v %s", err, errOut)
	}
}
