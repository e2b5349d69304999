package main

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/sova-ai/sova/internal/store"
)

// Start-up and storage figures of issue #17, on the real binary.
//
//	go test -run '^$' -bench 'Startup|Version|StoredBytes' -benchtime 5x ./cmd/sova/

// BenchmarkVersion is `sova version`: the cost of starting the program,
// paid by every CLI call and every parser worker.
func BenchmarkVersion(b *testing.B) {
	for b.Loop() {
		if out, err := exec.Command(binPath, "version").CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
}

// BenchmarkStartup starts `sova serve` and reports the time from the start
// of the process to the first 200 from /healthz (target < 50 ms) and the
// server's resident memory after a second of idling (target < 40 MB).
//
// The code sandbox's probe (bubblewrap starting Python, which imports
// numpy, pandas and matplotlib) runs before the server listens; the
// sub-benchmarks start with it on (the default) and off.
func BenchmarkStartup(b *testing.B) {
	for _, sb := range []string{"true", "false"} {
		b.Run("sandbox="+sb, func(b *testing.B) {
			w := newWorld(b)
			w.extra = map[string]string{"SOVA_SANDBOX_ENABLED": sb}
			benchStartup(b, w)
		})
	}
}

func benchStartup(b *testing.B, w *world) {
	var rss, healthy []float64
	b.ResetTimer()
	for b.Loop() {
		addr := freeAddr(b)
		cmd := exec.Command(binPath, "serve", "--addr", addr)
		cmd.Env = w.env()
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		waitHealthy(b, "http://"+addr)
		healthy = append(healthy, float64(time.Since(start))/1e6)
		b.StopTimer()
		time.Sleep(time.Second)
		rss = append(rss, float64(residentKB(b, cmd.Process.Pid))/1024)
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		b.StartTimer()
	}
	slices.Sort(healthy)
	b.ReportMetric(healthy[0], "min-healthz-ms")
	b.ReportMetric(healthy[len(healthy)/2], "median-healthz-ms")
	b.ReportMetric(healthy[len(healthy)-1], "max-healthz-ms")
	b.ReportMetric(medianOf(rss), "idle-RSS-MB")
}

// BenchmarkStoredBytes runs `search` questions through `sova serve` on
// SQLite and reports the bytes the database holds per run (its pages, by
// table, less those of an empty database), after the server stopped.
func BenchmarkStoredBytes(b *testing.B) {
	const runs = 10
	for b.Loop() {
		w := newWorld(b)
		addr := freeAddr(b)
		cmd := exec.Command(binPath, "serve", "--addr", addr)
		cmd.Env = w.env()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		base := "http://" + addr
		waitHealthy(b, base)
		for i := range runs {
			resp, err := http.Post(base+"/api/search", "application/json", strings.NewReader(fmt.Sprintf(
				`{"id":"bytes-%d","group":"search","messages":[{"role":"user","content":"How did presidents describe the economy in the 1930s?"}]}`, i)))
			if err != nil {
				b.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.Contains(string(body), `"type":"finish"`) {
				b.Fatalf("stream: %s", body)
			}
		}
		time.Sleep(time.Second) // titles
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		all, events, payload := storedBytes(b, w)
		b.ReportMetric(float64(all)/runs/1024, "KB/run")
		b.ReportMetric(float64(events)/runs/1024, "event-KB/run")
		b.ReportMetric(float64(payload)/runs/1024, "event-payload-KB/run")

		// Started again with a compaction delay of a millisecond, the
		// server's event sweeper compacts the finished runs at once.
		w.extra = map[string]string{"SOVA_RUN_EVENTS_COMPACT_AFTER": "1ms"}
		cmd = exec.Command(binPath, "serve", "--addr", addr)
		cmd.Env = w.env()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		waitHealthy(b, base)
		time.Sleep(time.Second)
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		all, events, payload = storedBytes(b, w)
		b.ReportMetric(float64(all)/runs/1024, "compacted-KB/run")
		b.ReportMetric(float64(events)/runs/1024, "compacted-event-KB/run")
		b.ReportMetric(float64(payload)/runs/1024, "compacted-event-payload-KB/run")
	}
}

// storedBytes is the size of the world's database less that of an empty
// one (pages, with the free space inside them), the part of it that is
// run events, and the bytes of the run events' rows themselves.
func storedBytes(tb testing.TB, w *world) (all, events, eventPayload int64) {
	tb.Helper()
	for name, n := range tableBytes(tb, filepath.Join(w.dataDir, store.SQLiteFileName)) {
		all += n[0]
		if name == "run_events" || strings.HasPrefix(name, "sqlite_autoindex_run_events") {
			events += n[0]
			eventPayload += n[1]
		}
	}
	return all, events, eventPayload
}

// tableBytes reads the size of each table and index of the database at
// path (SQLite's dbstat): its pages less the one of an empty table, and
// the payload of its rows.
func tableBytes(tb testing.TB, path string) map[string][2]int64 {
	tb.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	var page int64
	if err := db.QueryRow(`PRAGMA page_size`).Scan(&page); err != nil {
		tb.Fatal(err)
	}
	rows, err := db.Query(`SELECT name, SUM(pgsize), SUM(payload) FROM dbstat GROUP BY name`)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	out := map[string][2]int64{}
	for rows.Next() {
		var name string
		var size, payload int64
		if err := rows.Scan(&name, &size, &payload); err != nil {
			tb.Fatal(err)
		}
		out[name] = [2]int64{max(0, size-page), payload}
	}
	return out
}

func freeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func waitHealthy(tb testing.TB, base string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := &http.Client{Timeout: time.Second}
	for ctx.Err() == nil {
		if resp, err := c.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(time.Millisecond)
	}
	tb.Fatal("/healthz did not answer")
}

// residentKB reads VmRSS of a process (Linux).
func residentKB(tb testing.TB, pid int) int {
	tb.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Skipf("no /proc: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}

func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
