package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/sandbox"
)

// testConfig keeps the limits low so that the abuse tests end quickly.
var testConfig = sandbox.Config{
	CPUTime:     3 * time.Second,
	WallTime:    20 * time.Second,
	Memory:      1 << 30,
	Processes:   32,
	OutputBytes: 64 << 10,
	FileBytes:   16 << 20,
	WorkBytes:   64 << 20,
	MaxFiles:    8,
}

var shared struct {
	once sync.Once
	sb   *sandbox.Sandbox
	err  error
}

// newSandbox returns a sandbox with testConfig's limits, or skips the test
// where the sandbox cannot run (and only then).
func newSandbox(t testing.TB) *sandbox.Sandbox {
	t.Helper()
	shared.once.Do(func() { shared.sb, shared.err = sandbox.New(context.Background(), testConfig) })
	return skipUnavailable(t, shared.sb, shared.err)
}

func skipUnavailable(t testing.TB, sb *sandbox.Sandbox, err error) *sandbox.Sandbox {
	t.Helper()
	if errors.Is(err, sandbox.ErrUnavailable) {
		t.Skipf("the code sandbox cannot run here: %v (install bubblewrap and python3-numpy, python3-pandas, python3-matplotlib)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return sb
}

func run(t *testing.T, sb *sandbox.Sandbox, code string) *sandbox.Result {
	t.Helper()
	r, err := sb.Run(t.Context(), code)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	t.Logf("exit %d in %s, limit %q\nstdout: %s\nstderr: %s", r.ExitCode, r.Duration.Round(time.Millisecond), r.LimitHit, clip(r.Stdout), clip(r.Stderr))
	return r
}

func clip(s string) string {
	if len(s) > 2000 {
		return s[:1000] + " … " + s[len(s)-1000:]
	}
	return s
}

// leftovers counts processes still running the sandbox's code runner.
// leftovers counts the sandboxed processes still alive. Other packages'
// tests run cells of their own at the same time (go test runs packages in
// parallel), so it waits up to 3 s for the count to reach zero: a cell
// that outlived its end (these tests' cells sleep for a minute) is still
// there then, another test's short cell is not.
func leftovers(t *testing.T) int {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		var left []string
		dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, d := range dirs {
			b, _ := os.ReadFile(d)
			if bytes.Contains(b, []byte("/sova/sova.py\x00run")) {
				st, _ := os.ReadFile(filepath.Join(filepath.Dir(d), "status"))
				f := strings.Fields(string(st))
				left = append(left, d+" "+strings.Join(f[:min(20, len(f))], " "))
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			for _, l := range left {
				t.Logf("left: %s", l)
			}
			return len(left)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestPrint(t *testing.T) {
	sb := newSandbox(t)
	r := run(t, sb, "print('hello', 6*7)\n")
	if r.Stdout != "hello 42\n" || r.Stderr != "" || r.ExitCode != 0 || r.LimitHit != "" || len(r.Files) != 0 {
		t.Errorf("result %+v", r)
	}
	if !strings.Contains(sb.Version(), "numpy") {
		t.Errorf("version %q", sb.Version())
	}
}

func TestErrors(t *testing.T) {
	sb := newSandbox(t)
	r := run(t, sb, "x = 1\ny = x / 0\n")
	if r.ExitCode != 1 || !strings.Contains(r.Stderr, `File "cell.py", line 2`) || !strings.Contains(r.Stderr, "y = x / 0") ||
		!strings.HasSuffix(r.Stderr, "ZeroDivisionError: division by zero") || strings.Contains(r.Stderr, "sova.py") || r.LimitHit != "" {
		t.Errorf("exception: %+v", r)
	}
	r = run(t, sb, "print(1\n")
	if r.ExitCode != 1 || !strings.Contains(r.Stderr, "SyntaxError") {
		t.Errorf("syntax error: %+v", r)
	}
	r = run(t, sb, "import sys\nprint('out')\nsys.exit(3)\n")
	if r.ExitCode != 3 || r.Stdout != "out\n" {
		t.Errorf("sys.exit(3): %+v", r)
	}
	r = run(t, sb, "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n")
	if r.ExitCode != 128+15 {
		t.Errorf("killed by SIGTERM: %+v", r)
	}
}

func TestPandas(t *testing.T) {
	sb := newSandbox(t)
	r := run(t, sb, `import pandas as pd, numpy as np
df = pd.DataFrame({"city": ["Oslo", "Oslo", "Rome"], "t": [3.0, 5.0, 20.0]})
print(df.groupby("city")["t"].mean().to_dict())
print(np.arange(5).sum())
df.to_csv("temps.csv", index=False)
`)
	if r.ExitCode != 0 || r.Stdout != "{'Oslo': 4.0, 'Rome': 20.0}\n10\n" {
		t.Fatalf("result %+v", r)
	}
	if len(r.Files) != 1 || r.Files[0].Name != "temps.csv" || string(r.Files[0].Data) != "city,t\nOslo,3.0\nOslo,5.0\nRome,20.0\n" ||
		r.Files[0].MIME != "text/csv; charset=utf-8" {
		t.Errorf("files %+v", r.Files)
	}
}

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

func TestCharts(t *testing.T) {
	sb := newSandbox(t)
	r := run(t, sb, `import matplotlib.pyplot as plt
plt.plot([1, 2, 3], [2, 4, 1])
plt.title("shown")
plt.show()
fig, ax = plt.subplots()
ax.bar(["a", "b"], [3, 5])
import os
os.makedirs("plots", exist_ok=True)
fig.savefig("plots/bars.png")
plt.show()  # already saved by the code: not saved twice
plt.figure()
plt.plot([0, 1])  # left open: saved when the cell ends
`)
	if r.ExitCode != 0 {
		t.Fatalf("result %+v", r)
	}
	var names []string
	for _, f := range r.Files {
		names = append(names, f.Name)
		if !bytes.HasPrefix(f.Data, pngSignature) || f.MIME != "image/png" || f.Size != int64(len(f.Data)) || f.Size < 1000 {
			t.Errorf("%s: %d bytes of %s, starting %q", f.Name, f.Size, f.MIME, f.Data[:min(8, len(f.Data))])
		}
	}
	if !slices.Equal(names, []string{"chart_1.png", "chart_2.png", "plots/bars.png"}) {
		t.Errorf("files %v", names)
	}
}

// TestNetwork: a TCP server of the test on the host's loopback cannot be
// reached from the sandbox, which has a loopback of its own.
func TestNetwork(t *testing.T) {
	sb := newSandbox(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			_, _ = c.Write([]byte("secret from the host\n"))
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	r := run(t, sb, fmt.Sprintf(`import socket
try:
    s = socket.create_connection(("127.0.0.1", %d), timeout=3)
    print("CONNECTED", s.recv(100))
except OSError as e:
    print("blocked:", e)
`, port))
	if accepted.Load() != 0 || strings.Contains(r.Stdout, "CONNECTED") || !strings.Contains(r.Stdout, "blocked: [Errno 111] Connection refused") {
		t.Errorf("the sandbox reached the host's 127.0.0.1:%d (%d connections): %+v", port, accepted.Load(), r)
	}
}

// TestSecrets: nothing of the host's secrets, Sova's data or environment
// can be read.
func TestSecrets(t *testing.T) {
	sb := newSandbox(t)
	const canary = "canary-4f1d9c"
	t.Setenv("SOVA_TEST_CANARY", canary)
	dataDir := t.TempDir() // stands in for Sova's data directory
	db := filepath.Join(dataDir, "sova.db")
	if err := os.WriteFile(db, []byte("the database "+canary), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, sb, fmt.Sprintf(`import os, glob
for p in ["/etc/shadow", "/etc/passwd", %q, %q]:
    try:
        print(p, "READ", open(p).read())
    except OSError as e:
        print(p, "denied:", type(e).__name__)
print("environ", dict(os.environ))
for p in sorted(glob.glob("/proc/*/environ")):
    try:
        print(p, "READ", open(p, "rb").read())
    except OSError as e:
        print(p, "denied:", type(e).__name__)
print("fds", sorted(os.listdir("/proc/self/fd")))
print("stdin", repr(open(0).read()))
`, db, dataDir+"/"))
	// Not merely unreadable (the sandbox's user may own Sova's data):
	// absent.
	if r.ExitCode != 0 || strings.Contains(r.Stdout, canary) || strings.Contains(r.Stdout, "/etc/shadow READ") ||
		!strings.Contains(r.Stdout, "/etc/shadow denied: FileNotFoundError") || !strings.Contains(r.Stdout, db+" denied: FileNotFoundError") {
		t.Errorf("secrets: %+v", r)
	}
	// /proc/1 is the launcher, whose environment is the sandbox's.
	if !strings.Contains(r.Stdout, "/proc/1/environ READ b'HOME=/work\\x00TMPDIR=/work/.tmp\\x00PATH=/usr/bin:/bin\\x00LANG=C.UTF-8\\x00") {
		t.Errorf("/proc/1/environ was not what the sandbox sets:\n%s", r.Stdout)
	}
	// Only stdin, stdout, stderr and the listing's own descriptor: not
	// the pipes the launcher reports through.
	if !strings.Contains(r.Stdout, "fds ['0', '1', '2', '3']\n") || !strings.Contains(r.Stdout, "stdin ''") {
		t.Errorf("descriptors or stdin:\n%s", r.Stdout)
	}
}

// TestWriteOutside: only /work is writable, and it is not the host's.
func TestWriteOutside(t *testing.T) {
	sb := newSandbox(t)
	host := t.TempDir()
	r := run(t, sb, fmt.Sprintf(`import os
for p in ["/x", "/usr/x", "/etc/x", "/tmp/x", "/dev/x", "/dev/shm/x", "/proc/x", "/sova/sova.py", %q, "/work/ok.txt"]:
    try:
        with open(p, "w") as f:
            f.write("x")
        print(p, "WRITTEN")
    except OSError as e:
        print(p, "denied:", e.strerror)
`, filepath.Join(host, "x")))
	if strings.Count(r.Stdout, "WRITTEN") != 1 || !strings.Contains(r.Stdout, "/work/ok.txt WRITTEN") || strings.Count(r.Stdout, "denied") != 9 {
		t.Errorf("writes: %+v", r)
	}
	if entries, _ := os.ReadDir(host); len(entries) != 0 {
		t.Errorf("the code wrote to the host: %v", entries)
	}
	if len(r.Files) != 1 || r.Files[0].Name != "ok.txt" {
		t.Errorf("files %+v", r.Files)
	}
	// The work folder is fresh for every cell.
	r = run(t, sb, "import os\nprint(sorted(f for f in os.listdir('.') if not f.startswith('.')))\n")
	if r.Stdout != "[]\n" {
		t.Errorf("the last cell's files are still there: %q", r.Stdout)
	}
}

func TestForkBomb(t *testing.T) {
	sb := newSandbox(t)
	r := run(t, sb, "import os\nwhile True:\n    os.fork()\n")
	if r.LimitHit != sandbox.LimitProcesses || r.Duration > 10*time.Second {
		t.Errorf("fork bomb: limit %q after %s", r.LimitHit, r.Duration)
	}
	if n := leftovers(t); n != 0 {
		t.Errorf("%d processes of the cell outlived it", n)
	}
	// The host still starts processes.
	if out, err := exec.Command("/usr/bin/true").CombinedOutput(); err != nil {
		t.Errorf("after the fork bomb: %v %s", err, out)
	}
	r = run(t, sb, "print('still fine')\n")
	if r.Stdout != "still fine\n" {
		t.Errorf("after the fork bomb: %+v", r)
	}
}

// TestProcesses: the process limit holds however the sandbox is started
// (root's processes are exempt from RLIMIT_NPROC; the sandbox then runs
// as another user). A bounded count, so that a broken limit shows without
// a real fork bomb.
func TestProcesses(t *testing.T) {
	sb := newSandbox(t)
	r := run(t, sb, `import os, time
n = 0
try:
    for i in range(100):
        if os.fork() == 0:
            time.sleep(10)
            os._exit(0)
        n += 1
finally:
    print("forked", n)
`)
	var n int
	if _, err := fmt.Sscanf(r.Stdout, "forked %d", &n); err != nil || n >= testConfig.Processes || n < testConfig.Processes/2 ||
		r.LimitHit != sandbox.LimitProcesses {
		t.Errorf("forked %d of 100 with a limit of %d: %+v", n, testConfig.Processes, r)
	}
	if r.Duration > 5*time.Second || leftovers(t) != 0 {
		t.Errorf("the sleeping children were not stopped with the cell (%s, %d left)", r.Duration, leftovers(t))
	}
}

// TestEveryProcessLimited: no process in the sandbox is without the
// limits — the code could take over one of its own user's processes
// (ptrace) and fork or allocate through it.
func TestEveryProcessLimited(t *testing.T) {
	sb := newSandbox(t)
	r := run(t, sb, `import glob
for p in sorted(glob.glob("/proc/[0-9]*/limits")):
    for line in open(p):
        if line.startswith(("Max processes", "Max cpu time", "Max address space")):
            print(p, " ".join(line.split()))
`)
	var limited int
	for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		if !strings.HasSuffix(line, "Max cpu time 3 4 seconds") && !strings.HasSuffix(line, "Max processes 32 32 processes") &&
			!strings.HasSuffix(line, "Max address space 1073741824 1073741824 bytes") {
			t.Errorf("a process without the limits: %s", line)
		} else {
			limited++
		}
	}
	if limited < 6 { // the launcher and the code, three limits each
		t.Errorf("limits seen:\n%s", r.Stdout)
	}
}

func TestThreadsCounted(t *testing.T) {
	sb := newSandbox(t)
	// Small stacks, so that memory is not what runs out.
	r := run(t, sb, `import threading, time
threading.stack_size(256 << 10)
n = 0
try:
    for i in range(1000):
        threading.Thread(target=time.sleep, args=(5,), daemon=True).start()
        n += 1
finally:
    print("started", n)
`)
	var n int
	if _, err := fmt.Sscanf(r.Stdout, "started %d", &n); err != nil || n >= testConfig.Processes || n < testConfig.Processes/2 ||
		r.LimitHit != sandbox.LimitProcesses || !strings.Contains(r.Stderr, "can't start new thread") {
		t.Errorf("started %d threads of 1000 with a limit of %d processes: %+v", n, testConfig.Processes, r)
	}
}

func TestMemory(t *testing.T) {
	sb := newSandbox(t)
	r := run(t, sb, "x = bytearray(4 * 1024**3)\nprint('allocated', len(x))\n")
	if r.ExitCode == 0 || r.LimitHit != sandbox.LimitMemory || strings.Contains(r.Stdout, "allocated") {
		t.Errorf("4 GB: %+v", r)
	}
	r = run(t, sb, "import numpy as np\na = np.empty(4 * 1024**3 // 8)\nprint('allocated', a.nbytes)\n")
	if r.LimitHit != sandbox.LimitMemory || !strings.Contains(r.Stderr, "Unable to allocate 4.00 GiB") {
		t.Errorf("4 GB with numpy: %+v", r)
	}
}

func TestEndlessLoop(t *testing.T) {
	sb := newSandbox(t)
	r := run(t, sb, "while True:\n    pass\n")
	if r.LimitHit != sandbox.LimitCPU || r.ExitCode != 128+24 || r.CPUTime < testConfig.CPUTime*2/3 || r.CPUTime > testConfig.CPUTime+1500*time.Millisecond ||
		r.Duration > testConfig.WallTime {
		t.Errorf("endless loop: %+v", r)
	}
	// Ignoring SIGXCPU only buys the second before SIGKILL.
	r = run(t, sb, "import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True:\n    pass\n")
	if r.LimitHit != sandbox.LimitCPU || r.ExitCode != 128+9 {
		t.Errorf("endless loop ignoring SIGXCPU: %+v", r)
	}
}

func TestWallTime(t *testing.T) {
	cfg := testConfig
	cfg.WallTime = 2 * time.Second
	sb, err := sandbox.New(t.Context(), cfg)
	sb = skipUnavailable(t, sb, err)
	r := run(t, sb, "import time, os\nos.fork()\ntime.sleep(60)\n")
	if r.LimitHit != sandbox.LimitWall || r.ExitCode != -1 || r.Duration > 6*time.Second {
		t.Errorf("sleep: %+v", r)
	}
	if n := leftovers(t); n != 0 {
		t.Errorf("%d processes of the cell outlived it", n)
	}
	// The caller's context ends the cell too, with its error.
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := sb.Run(ctx, "import time\ntime.sleep(60)\n"); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 4*time.Second {
		t.Errorf("cancelled: %v after %s", err, time.Since(start))
	}
}

func TestOutputFlood(t *testing.T) {
	sb := newSandbox(t)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := run(t, sb, "import sys\nsys.stdout.write('x' * 100_000_000)\nsys.stderr.write('e' * 100_000_000)\nprint('the end')\n")
	runtime.ReadMemStats(&after)
	if !r.StdoutTruncated || !r.StderrTruncated || r.LimitHit != sandbox.LimitOutput || r.ExitCode != 0 {
		t.Errorf("100 MB: %+v", r)
	}
	if len(r.Stdout) > testConfig.OutputBytes+200 || !strings.HasSuffix(r.Stdout, "the end\n") ||
		!strings.Contains(r.Stdout, "bytes of output discarded") {
		t.Errorf("stdout kept: %d bytes, ending %q", len(r.Stdout), r.Stdout[max(0, len(r.Stdout)-20):])
	}
	// 200 MB went through; far less was allocated to keep it.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("%d MB allocated reading 200 MB of output", alloc>>20)
	}
}

func TestFileSize(t *testing.T) {
	sb := newSandbox(t)
	r := run(t, sb, `chunk = b"\0" * (1 << 20)
with open("big.bin", "wb") as f:
    for i in range(1024):
        f.write(chunk)
print("wrote 1 GB")
`)
	if r.LimitHit != sandbox.LimitFileSize || strings.Contains(r.Stdout, "wrote") || !strings.Contains(r.Stderr, "File too large") {
		t.Errorf("1 GB file: %+v", r)
	}
	if len(r.Files) != 1 || r.Files[0].Size != testConfig.FileBytes {
		t.Errorf("files %+v", r.Files)
	}
	// Many files within the file limit fill the work folder.
	r = run(t, sb, `chunk = b"\0" * (1 << 20)
for n in range(100):
    with open("part%d.bin" % n, "wb") as f:
        f.write(chunk * 10)
`)
	if r.LimitHit != sandbox.LimitWorkDir || !strings.Contains(r.Stderr, "No space left on device") {
		t.Errorf("100 files of 10 MB: %+v", r)
	}
	var total int64
	for _, f := range r.Files {
		total += f.Size
	}
	if total > testConfig.WorkBytes {
		t.Errorf("%d files of %d bytes returned", len(r.Files), total)
	}
	// More files than are returned.
	r = run(t, sb, "for n in range(12):\n    open('f%02d.txt' % n, 'w').write(str(n))\n")
	if len(r.Files) != testConfig.MaxFiles || r.Files[0].Name != "f00.txt" ||
		!slices.Equal(r.FilesSkipped, []string{"f08.txt", "f09.txt", "f10.txt", "f11.txt"}) {
		t.Errorf("12 files: %d returned, skipped %v", len(r.Files), r.FilesSkipped)
	}
}

// TestLinks: links the code leaves in the work folder are not followed
// when its files are collected: only regular files come back.
func TestLinks(t *testing.T) {
	sb := newSandbox(t)
	r := run(t, sb, `import os
open("real.txt", "w").write("mine")
os.symlink("/etc/ld.so.cache", "cache.png")
os.symlink("/proc/self/environ", "environ.txt")
os.symlink("/usr/share", "share")
os.symlink("real.txt", "again.txt")
os.link("real.txt", "hard.txt")
os.mkfifo("fifo")
os.makedirs("a/b/c/d", exist_ok=True)
open("a/b/c/d/deep.txt", "w").write("too deep")
open("a/b/c/level3.txt", "w").write("three down")
open(".hidden", "w").write("hidden")
`)
	var names []string
	for _, f := range r.Files {
		names = append(names, f.Name)
	}
	if r.ExitCode != 0 || !slices.Equal(names, []string{"a/b/c/level3.txt", "hard.txt", "real.txt"}) {
		t.Errorf("files %v: %+v", names, r)
	}
}

func TestConcurrent(t *testing.T) {
	sb := newSandbox(t)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			r, err := sb.Run(t.Context(), fmt.Sprintf("open('n.txt', 'w').write('%d')\nprint(%d)\n", i, i))
			if err != nil || r.Stdout != fmt.Sprintf("%d\n", i) || len(r.Files) != 1 || string(r.Files[0].Data) != fmt.Sprint(i) {
				t.Errorf("cell %d: %v %+v", i, err, r)
			}
		})
	}
	wg.Wait()
}

func TestUnavailable(t *testing.T) {
	_, err := sandbox.New(t.Context(), sandbox.Config{Bwrap: "/nonexistent/bwrap"})
	if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "bubblewrap (/nonexistent/bwrap) is not installed") {
		t.Errorf("no bubblewrap: %v", err)
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		return
	}
	_, err = sandbox.New(t.Context(), sandbox.Config{Python: "/nonexistent/python3"})
	if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "python3 is not installed at /nonexistent/python3") {
		t.Errorf("no python: %v", err)
	}
	py := filepath.Join(t.TempDir(), "python3")
	if err := os.WriteFile(py, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = sandbox.New(t.Context(), sandbox.Config{Python: py})
	if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "outside /usr, where the sandbox cannot see it") {
		t.Errorf("a Python outside /usr: %v", err)
	}
}
