package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// SOVA_ADDR=127.0.0.2:… is this machine only, and the log says so; the
// server answers to its address and to SOVA_ALLOWED_HOSTS, and refuses
// other host names.
func TestServeOnAnotherLoopbackAddress(t *testing.T) {
	w := newWorld(t)
	cmd := exec.Command(binPath, "serve", "--addr", "127.0.0.2:0")
	cmd.Env = append(w.env(), "SOVA_ALLOWED_HOSTS=sova.test")
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		pw.Close()
	})
	logs := &syncBuffer{}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			logs.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "sova ready") {
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not start:\n%s", logs)
	}
	out := logs.String()
	if !strings.Contains(out, "this machine only") || strings.Contains(out, "all interfaces") {
		t.Errorf("the log should say it listens on this machine only:\n%s", out)
	}
	m := regexp.MustCompile(`addr=(?:http://)?(127\.0\.0\.2:\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no 127.0.0.2 address in the log:\n%s", out)
	}
	base := "http://" + m[1]
	for host, want := range map[string]int{"": 200, "sova.test": 200, "sova.test:80": 200, "localhost": 200, "evil.example": http.StatusMisdirectedRequest} {
		req, _ := http.NewRequest("GET", base+"/healthz", nil)
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error struct{ Code, Message string }
		}
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != want || (want != 200 && !strings.Contains(body.Error.Message, "SOVA_ALLOWED_HOSTS")) {
			t.Errorf("Host %q: %d %+v, want %d", host, resp.StatusCode, body, want)
		}
	}
}

// Beyond loopback without authentication, serve refuses to start and
// names the settings that allow it; SOVA_AUTH=none allows it.
func TestServeRefusesToExposeWithoutAuthentication(t *testing.T) {
	w := newWorld(t)
	cmd := exec.Command(binPath, "serve", "--addr", "0.0.0.0:0")
	cmd.Env = w.env()
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("serve on 0.0.0.0 started without authentication:\n%s", out)
	}
	for _, want := range []string{"refusing to listen", "sova users add", "SOVA_AUTH=none", "SOVA_ANONYMOUS=true"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the error does not say %q:\n%s", want, out)
		}
	}

	cmd = exec.Command(binPath, "serve", "--addr", "0.0.0.0:0")
	cmd.Env = append(w.env(), "SOVA_AUTH=none")
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		pw.Close()
	})
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		var logs strings.Builder
		for sc.Scan() {
			logs.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "sova ready") {
				ready <- logs.String()
				return
			}
		}
	}()
	select {
	case logs := <-ready:
		if !strings.Contains(logs, "SOVA_AUTH=none") {
			t.Errorf("no warning about SOVA_AUTH=none:\n%s", logs)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve with SOVA_AUTH=none did not start")
	}
}
