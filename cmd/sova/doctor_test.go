package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// envWith is w's environment with some variables replaced.
func (w *world) envWith(kv ...string) []string {
	env := w.env()
	for i := 0; i+1 < len(kv); i += 2 {
		env = append(env, kv[i]+"="+kv[i+1]) // the last one wins
	}
	return env
}

// closedPortURL is a model endpoint on whose port nothing listens.
func closedPortURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return "http://" + addr + "/v1"
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// doctorWorld is a good setup: the model lists the configured models and
// wants the key the environment gives.
func doctorWorld(t *testing.T) *world {
	w := newWorld(t)
	w.model.SetModels("main-model", "fast-model")
	w.model.RequireKey("test-key")
	return w
}

func TestDoctorGoodSetup(t *testing.T) {
	w := doctorWorld(t)
	out, errOut, err := w.sova(t, "doctor")
	if exitCode(err) != 0 {
		t.Fatalf("doctor: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	want := []*regexp.Regexp{
		regexp.MustCompile(`^✓ model endpoint: http://127\.0\.0\.1:\d+/v1 answers \(2 models\)$`),
		regexp.MustCompile(`^✓ API key: accepted$`),
		regexp.MustCompile(`^✓ main model: main-model is served$`),
		regexp.MustCompile(`^✓ fast model: fast-model is served$`),
		regexp.MustCompile(`^✓ web search: searxng: answered "open source" with 3 results$`),
		regexp.MustCompile(`^✓ data directory: .+ is writable$`),
		regexp.MustCompile(`^✓ database: SQLite .+/sova\.db opens, schema up to date$`),
		regexp.MustCompile(`^[✓✗] code sandbox \(optional\): (available|unavailable)`),
		regexp.MustCompile(`^All required checks passed\.$`),
	}
	// Each group tool's line is checked by internal/doctor's TestToolChecks.
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.Contains(l, " tool ") {
			lines = append(lines, l)
		}
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i, re := range want {
		if !re.MatchString(lines[i]) {
			t.Errorf("line %d = %q, want %s", i+1, lines[i], re)
		}
	}
	if errOut != "" {
		t.Errorf("stderr: %s", errOut)
	}

	out, _, err = w.sova(t, "doctor", "--json")
	var r struct {
		OK     bool `json:"ok"`
		Checks []struct {
			Name, Status string
			Required     bool
		} `json:"checks"`
	}
	// The setup's 8 checks, then one line per group tool (optional).
	if exitCode(err) != 0 || json.Unmarshal([]byte(out), &r) != nil || !r.OK || len(r.Checks) < 9 ||
		r.Checks[0].Name != "model endpoint" || r.Checks[0].Status != "ok" || !r.Checks[0].Required || r.Checks[7].Required ||
		!strings.HasPrefix(r.Checks[8].Name, "tool ") || r.Checks[8].Required {
		t.Errorf("doctor --json: %v\n%s", err, out)
	}
}

func TestDoctorUnreachableEndpoint(t *testing.T) {
	w := doctorWorld(t)
	start := time.Now()
	out, errOut, err := w.sovaEnv(t, w.envWith("SOVA_LLM_BASE_URL", closedPortURL(t)), "doctor")
	elapsed := time.Since(start)
	if exitCode(err) != 1 {
		t.Fatalf("exit status %d, want 1: %v\n%s", exitCode(err), err, out)
	}
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^✗ model endpoint: http://127\.0\.0\.1:\d+/v1 cannot be reached: connection refused — fix: is the server running\? set SOVA_LLM_BASE_URL$`),
		regexp.MustCompile(`(?m)^– API key: not checked: the endpoint did not answer$`),
		regexp.MustCompile(`(?m)^– main model: not checked`),
		regexp.MustCompile(`(?m)^✓ web search: searxng: `),
		regexp.MustCompile(`(?m)^✓ database: `),
		regexp.MustCompile(`(?m)^1 required check failed\.$`),
	} {
		if !re.MatchString(out) {
			t.Errorf("output lacks %s:\n%s", re, out)
		}
	}
	if errOut != "" {
		t.Errorf("stderr: %s", errOut)
	}
	if elapsed > 10*time.Second {
		t.Errorf("took %s", elapsed)
	}

	out, _, err = w.sovaEnv(t, w.envWith("SOVA_LLM_API_KEY", "wrong"), "doctor", "--json")
	var r struct {
		OK     bool                                         `json:"ok"`
		Checks []struct{ Name, Status, Detail, Fix string } `json:"checks"`
	}
	if exitCode(err) != 1 || json.Unmarshal([]byte(out), &r) != nil || r.OK || r.Checks[1].Status != "fail" ||
		r.Checks[1].Fix != "set SOVA_LLM_API_KEY or OPENAI_API_KEY" {
		t.Errorf("doctor --json with a refused key: %v\n%s", err, out)
	}
}

// sova serve starts even when the model endpoint cannot be reached, and
// says so once, loudly, with the fix.
func TestServeWarnsWhenTheModelEndpointIsUnreachable(t *testing.T) {
	w := newWorld(t)
	cmd := exec.Command(binPath, "serve", "--addr", "127.0.0.1:0")
	cmd.Env = w.envWith("SOVA_LLM_BASE_URL", closedPortURL(t))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var logs strings.Builder
	var url string
	warnings := 0
	deadline := time.After(10 * time.Second)
	addr := regexp.MustCompile(`addr=(http://127\.0\.0\.1:\d+)`)
	for url == "" || warnings == 0 {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("serve stopped:\n%s", logs.String())
			}
			logs.WriteString(l + "\n")
			if m := addr.FindStringSubmatch(l); m != nil {
				url = m[1]
			}
			if strings.Contains(l, "MODEL ENDPOINT NOT USABLE") {
				warnings++
				if !strings.Contains(l, "level=WARN") || !strings.Contains(l, "connection refused") || !strings.Contains(l, "set SOVA_LLM_BASE_URL") {
					t.Errorf("warning: %s", l)
				}
			}
		case <-deadline:
			t.Fatalf("no address and warning within 10s:\n%s", logs.String())
		}
	}
	res, err := http.Get(url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("healthz: %s", res.Status)
	}
	// Nothing more is said about it.
	quiet := time.After(300 * time.Millisecond)
	for done := false; !done; {
		select {
		case l := <-lines:
			if strings.Contains(l, "MODEL ENDPOINT NOT USABLE") {
				t.Errorf("warned twice: %s", l)
			}
		case <-quiet:
			done = true
		}
	}
}
