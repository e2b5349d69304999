// Package sandbox runs untrusted Python 3 code — what a model writes to
// compute, analyse data or draw a chart — with numpy, pandas and
// matplotlib from the system's packages, under bubblewrap (bwrap), and
// returns its output and the files it wrote.
//
// A code cell runs in new namespaces of every kind (user, PID, network,
// mount, IPC, UTS, cgroup): no network but a loopback of its own, the
// system read-only (/usr and the few files of /etc that Python and
// matplotlib read), /proc of its own PID namespace only, /dev read-only,
// and one writable place, /work, a fresh tmpfs of bounded size that is
// gone when the cell ends. Nothing of Sova is visible: not its data
// directory, not its environment (bubblewrap starts with an environment of
// two variables and the code gets a handful of its own). When Sova runs as
// root the sandbox runs as an unprivileged user (Config.UID), so that the
// kernel enforces the process limit and no capability is held outside.
//
// Limits: CPU time, address space, processes (threads included), file size
// and open files are rlimits set on the code's process before its Python
// starts; the wall-clock limit kills the sandbox; stdout and stderr are
// kept up to a size and the rest is discarded (and said so); the work
// folder's size is the tmpfs's. See docs/security.md, "Code sandbox".
//
// New probes once that bubblewrap can make its namespaces here and that the
// Python sees numpy, pandas and matplotlib; where it cannot, New returns an
// error matching ErrUnavailable with the reason, and code tools must be
// withdrawn — code never runs outside the sandbox.
package sandbox

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Defaults of Config (SOVA_SANDBOX_*).
const (
	DefaultPython      = "/usr/bin/python3"
	DefaultCPUTime     = 30 * time.Second
	DefaultWallTime    = 60 * time.Second
	DefaultMemory      = 1 << 30
	DefaultProcesses   = 32
	DefaultOutputBytes = 256 << 10
	DefaultFileBytes   = 16 << 20
	DefaultWorkBytes   = 64 << 20
	DefaultMaxFiles    = 16
	DefaultConcurrency = 2
	// DefaultUID is the user (and group) the sandbox runs as when Sova
	// runs as root: nobody.
	DefaultUID = 65534
	// MaxCodeBytes bounds the code of one cell.
	MaxCodeBytes = 1 << 20
)

// Config sets the sandbox's programs and limits. Zero fields take the
// defaults.
type Config struct {
	// Bwrap is the bubblewrap program, a path or a name looked up in PATH
	// ("bwrap").
	Bwrap string
	// Python is the interpreter run inside: the system's, whose packages
	// are numpy, pandas and matplotlib. It must live under /usr, the only
	// part of the system the sandbox sees.
	Python string
	// CPUTime limits the CPU time of each process of a cell (RLIMIT_CPU).
	CPUTime time.Duration
	// WallTime limits a cell's run, start-up included; the sandbox is
	// killed when it passes.
	WallTime time.Duration
	// Memory limits each process's address space (RLIMIT_AS), in bytes.
	Memory int64
	// Processes limits the processes and threads of a cell (RLIMIT_NPROC,
	// counted in the cell's own user namespace).
	Processes int
	// OutputBytes is how much of stdout, and of stderr, is kept.
	OutputBytes int
	// FileBytes limits the size of a file the code writes (RLIMIT_FSIZE),
	// and of a file returned.
	FileBytes int64
	// WorkBytes is the size of the work folder (the tmpfs /work).
	WorkBytes int64
	// MaxFiles is how many files of the work folder are returned.
	MaxFiles int
	// Concurrency is how many cells run at once; the others wait.
	Concurrency int
	// UID and GID are the user and group the sandbox runs as when Sova
	// runs as root; ignored otherwise (it runs as Sova's user).
	UID, GID int
}

func (c Config) withDefaults() Config {
	if c.Bwrap == "" {
		c.Bwrap = "bwrap"
	}
	if c.Python == "" {
		c.Python = DefaultPython
	}
	if c.CPUTime <= 0 {
		c.CPUTime = DefaultCPUTime
	}
	if c.WallTime <= 0 {
		c.WallTime = DefaultWallTime
	}
	if c.Memory <= 0 {
		c.Memory = DefaultMemory
	}
	if c.Processes <= 0 {
		c.Processes = DefaultProcesses
	}
	if c.OutputBytes <= 0 {
		c.OutputBytes = DefaultOutputBytes
	}
	if c.FileBytes <= 0 {
		c.FileBytes = DefaultFileBytes
	}
	if c.WorkBytes <= 0 {
		c.WorkBytes = DefaultWorkBytes
	}
	if c.MaxFiles <= 0 {
		c.MaxFiles = DefaultMaxFiles
	}
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.UID <= 0 {
		c.UID = DefaultUID
	}
	if c.GID <= 0 {
		c.GID = DefaultUID
	}
	return c
}

// ErrUnavailable is matched (errors.Is) by the error of New when the
// sandbox cannot run here; the error says why.
var ErrUnavailable = errors.New("code sandbox unavailable")

// UnavailableError says why the sandbox cannot run. It matches
// ErrUnavailable.
type UnavailableError struct {
	Reason string
	// Fix says what to change, for people (sova doctor).
	Fix string
	Err error // the underlying failure, if any
}

func (e *UnavailableError) Error() string { return "code sandbox unavailable: " + e.Reason }

// Is makes errors.Is(err, ErrUnavailable) true.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

func (e *UnavailableError) Unwrap() error { return e.Err }

func unavailable(err error, fix, format string, args ...any) error {
	return &UnavailableError{Reason: fmt.Sprintf(format, args...), Fix: fix, Err: err}
}

// What to do about an unavailable sandbox.
const (
	fixInstall = "install bubblewrap and the system's python3 with numpy, pandas and matplotlib " +
		"(Debian: apt-get install bubblewrap python3-numpy python3-pandas python3-matplotlib)"
	fixPython     = "set SOVA_SANDBOX_PYTHON to the system's Python (" + DefaultPython + ")"
	fixNamespaces = "allow unprivileged user namespaces: sysctl user.max_user_namespaces above 0 " +
		"(and kernel.unprivileged_userns_clone=1 where it exists; on Ubuntu 24.04 " +
		"kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap); " +
		"in a container, a seccomp profile that lets bwrap create namespaces"
)

// Limits hit by a cell (Result.LimitHit).
const (
	LimitWall      = "wall"
	LimitCPU       = "cpu"
	LimitMemory    = "memory"
	LimitProcesses = "processes"
	LimitFileSize  = "file size"
	LimitWorkDir   = "work dir"
	LimitOutput    = "output"
)

// File is a file the code left in the work folder.
type File struct {
	// Name is its path in the work folder, with forward slashes.
	Name string `json:"name"`
	Size int64  `json:"size"`
	MIME string `json:"mime"`
	Data []byte `json:"-"`
}

// Result is what a cell did.
type Result struct {
	Stdout string
	// Stderr is trimmed of surrounding blank space.
	Stderr string
	// ExitCode is the code's exit status; 128+n when signal n killed it;
	// -1 when the sandbox was killed at the wall-clock limit.
	ExitCode int
	// Files are the regular files the code left in the work folder (not
	// symbolic links, not hidden ones), in path order.
	Files    []File
	Duration time.Duration
	// StdoutTruncated and StderrTruncated say output was discarded past
	// Config.OutputBytes (the text says how much).
	StdoutTruncated, StderrTruncated bool
	// FilesSkipped names files not returned: too many, or too large.
	FilesSkipped []string
	// LimitHit names the limit that stopped the code (LimitWall, …), or
	// is empty.
	LimitHit string
	// CPUTime is the CPU time the code's main process used.
	CPUTime time.Duration
}

//go:embed sova.py
var script []byte

// Sandbox runs code cells. It is safe for concurrent use.
type Sandbox struct {
	cfg   Config
	bwrap string
	// asUser is set when Sova runs as root: the sandbox's credentials.
	asUser *syscall.Credential
	// disableUserns is set when bubblewrap can forbid new user namespaces
	// inside (0.8.0 and later).
	disableUserns bool
	slots         chan struct{}
	version       string
	// fontList is matplotlib's font cache made by the probe, named
	// fontListName; nil: each cell makes its own.
	fontList     []byte
	fontListName string
}

// ProbeTimeout bounds New's probe.
const ProbeTimeout = 30 * time.Second

// New returns a sandbox after checking that it works here: bubblewrap is
// installed and can create its namespaces (it runs true inside), and the
// Python inside imports numpy, pandas and matplotlib. When it cannot, the
// error matches ErrUnavailable and says why.
func New(ctx context.Context, cfg Config) (*Sandbox, error) {
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	bwrap, err := exec.LookPath(cfg.Bwrap)
	if err != nil {
		return nil, unavailable(err, fixInstall, "bubblewrap (%s) is not installed", cfg.Bwrap)
	}
	if !filepath.IsAbs(cfg.Python) {
		return nil, unavailable(nil, fixPython, "the sandbox's Python must be given as an absolute path, not %q", cfg.Python)
	}
	py, err := filepath.EvalSymlinks(cfg.Python)
	if err != nil {
		return nil, unavailable(err, fixInstall, "python3 is not installed at %s", cfg.Python)
	}
	if !strings.HasPrefix(py, "/usr/") {
		return nil, unavailable(nil, fixPython, "%s is %s, outside /usr, where the sandbox cannot see it; use the system's Python (%s)", cfg.Python, py, DefaultPython)
	}
	s := &Sandbox{cfg: cfg, bwrap: bwrap, slots: make(chan struct{}, cfg.Concurrency)}
	if os.Geteuid() == 0 {
		s.asUser = &syscall.Credential{Uid: uint32(cfg.UID), Gid: uint32(cfg.GID), Groups: []uint32{}}
	}
	help, _ := exec.CommandContext(ctx, bwrap, "--help").CombinedOutput()
	s.disableUserns = bytes.Contains(help, []byte("--disable-userns"))
	if v, err := exec.CommandContext(ctx, bwrap, "--version").Output(); err == nil {
		s.version = strings.TrimSpace(string(v))
	}

	// Namespaces first: the commonest failure, and the one whose reason
	// bubblewrap states best.
	out, err := s.command(ctx, nil, "/usr/bin/true").CombinedOutput()
	if err != nil {
		return nil, unavailable(err, fixNamespaces, "bubblewrap cannot set up the sandbox here%s: %s", s.who(), lastLine(out, err))
	}
	r, err := s.Run(ctx, probeCode)
	if err != nil {
		return nil, unavailable(err, fixInstall, "the sandbox does not start: %v", err)
	}
	if r.ExitCode != 0 {
		return nil, unavailable(nil, fixInstall, "%s in the sandbox cannot import numpy, pandas and matplotlib: %s", cfg.Python, lastLine([]byte(r.Stderr), nil))
	}
	s.version += ", " + strings.TrimSpace(r.Stdout)
	// matplotlib lists the system's fonts into a cache in MPLCONFIGDIR,
	// which every cell starts empty; the probe's list is copied into each
	// cell instead of being made again (a tenth of a second or more).
	for _, f := range r.Files {
		if strings.HasPrefix(f.Name, "fontlist-") && strings.HasSuffix(f.Name, ".json") && !strings.Contains(f.Name, "/") {
			s.fontList, s.fontListName = f.Data, f.Name
		}
	}
	return s, nil
}

// probeCode checks the libraries and returns matplotlib's font list.
const probeCode = `import os, shutil, sys, numpy, pandas, matplotlib, matplotlib.font_manager
print("Python %d.%d.%d with numpy %s, pandas %s, matplotlib %s" % (sys.version_info[:3] + (numpy.__version__, pandas.__version__, matplotlib.__version__)))
cache = os.environ["MPLCONFIGDIR"]
for name in os.listdir(cache):
    if name.startswith("fontlist-") and name.endswith(".json"):
        shutil.copy(os.path.join(cache, name), name)
`

// Version describes what runs the code: bubblewrap's version, Python's
// and its libraries'.
func (s *Sandbox) Version() string { return s.version }

// Config returns the sandbox's settings, defaults filled in.
func (s *Sandbox) Config() Config { return s.cfg }

func (s *Sandbox) who() string {
	if s.asUser != nil {
		return fmt.Sprintf(" as uid %d (Sova runs as root; SOVA_SANDBOX_UID)", s.asUser.Uid)
	}
	return ""
}

// lastLine is the last non-empty line of out, or err's text.
func lastLine(out []byte, err error) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return l
	}
	if err != nil {
		return err.Error()
	}
	return "no output"
}

// Run runs one cell of Python code and returns what it printed and the
// files it wrote. A cell stopped at a limit is a Result with LimitHit set,
// not an error; the error is for a sandbox that could not run at all, for
// code too large, or for ctx ending (its error is returned).
func (s *Sandbox) Run(ctx context.Context, code string) (*Result, error) {
	if len(code) > MaxCodeBytes {
		return nil, fmt.Errorf("the code is %d bytes; the limit is %d", len(code), MaxCodeBytes)
	}
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-s.slots }()

	start := time.Now()
	wallCtx, cancel := context.WithTimeout(ctx, s.cfg.WallTime)
	defer cancel()

	// fd 3 carries the files and the status back; fd 4 is this package's
	// script, which bubblewrap copies in read-only.
	resR, resW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer resR.Close()
	// Then the read-only files bubblewrap copies in from pipes: the
	// script, and matplotlib's font list when the probe made one.
	extra := []*os.File{resW}
	var bind []string
	data := []struct {
		path string
		data []byte
	}{{scriptPath, script}}
	if s.fontList != nil {
		data = append(data, struct {
			path string
			data []byte
		}{fontListPath, s.fontList})
	}
	for _, d := range data {
		r, err := dataPipe(d.data)
		if err != nil {
			closeAll(extra)
			return nil, err
		}
		bind = append(bind, "--ro-bind-data", strconv.Itoa(3+len(extra)), d.path)
		extra = append(extra, r)
	}
	// bubblewrap says on --info-fd which PID the sandbox has on the host.
	infoR, infoW, err := os.Pipe()
	if err != nil {
		closeAll(extra)
		return nil, err
	}
	defer infoR.Close()
	bind = append(bind, "--info-fd", strconv.Itoa(3+len(extra)))
	extra = append(extra, infoW)
	launch, _ := json.Marshal(map[string]any{
		"python":     s.cfg.Python,
		"cpu":        int64((s.cfg.CPUTime + time.Second - 1) / time.Second),
		"memory":     s.cfg.Memory,
		"processes":  s.cfg.Processes,
		"file_bytes": s.cfg.FileBytes,
		"work_bytes": s.cfg.WorkBytes,
		"max_files":  s.cfg.MaxFiles,
		"font_list":  s.fontListName,
	})
	cmd := s.command(wallCtx, bind, s.cfg.Python, "-I", "-S", "-B", scriptPath, "launch", string(launch))
	stdout, stderr := newCapped(s.cfg.OutputBytes), newCapped(s.cfg.OutputBytes)
	cmd.Stdin = strings.NewReader(code)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.ExtraFiles = extra
	err = cmd.Start()
	closeAll(extra)
	if err != nil {
		return nil, fmt.Errorf("starting bubblewrap: %w", err)
	}
	results := make(chan results, 1)
	go func() { results <- readResults(resR, s.cfg) }()
	first := make(chan sandboxProcess, 1)
	go func() { first <- readInfo(infoR) }()
	waitErr := cmd.Wait()
	if wallCtx.Err() != nil {
		// bubblewrap was killed; the sandbox dies after it.
		_ = infoR.SetReadDeadline(time.Now().Add(time.Second))
		(<-first).waitGone(2 * time.Second)
	}
	// Every process of the sandbox is gone with its PID namespace; what
	// is left in the pipe is read, then no more is waited for.
	_ = resR.SetReadDeadline(time.Now().Add(2 * time.Second))
	res := <-results

	r := &Result{
		Duration:        time.Since(start),
		Files:           res.files,
		Stdout:          stdout.String(),
		Stderr:          strings.TrimSpace(stderr.String()),
		StdoutTruncated: stdout.Truncated(),
		StderrTruncated: stderr.Truncated(),
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if res.status == nil {
		if wallCtx.Err() != nil {
			r.ExitCode, r.LimitHit = -1, LimitWall
			return r, nil
		}
		// Bubblewrap itself failed (it says why on stderr), or the
		// launcher did.
		return nil, fmt.Errorf("the sandbox failed: %s", lastLine([]byte(r.Stderr), waitErr))
	}
	st := res.status
	r.FilesSkipped = st.Skipped
	r.CPUTime = time.Duration(st.CPU * float64(time.Second))
	if st.Signal != 0 {
		r.ExitCode = 128 + st.Signal
	} else {
		r.ExitCode = st.Exit
	}
	r.LimitHit = s.limitHit(r, st)
	return r, nil
}

// limitHit tells which limit stopped the code, from how it ended and what
// it said: Python reports a failed allocation, fork or write as an
// exception, and the kernel a CPU limit as SIGXCPU.
func (s *Sandbox) limitHit(r *Result, st *status) string {
	cpu := time.Duration(st.CPU * float64(time.Second))
	switch {
	case st.Signal == int(syscall.SIGXCPU),
		st.Signal == int(syscall.SIGKILL) && cpu >= s.cfg.CPUTime-100*time.Millisecond:
		return LimitCPU
	case st.Signal == int(syscall.SIGXFSZ):
		return LimitFileSize
	}
	if r.ExitCode != 0 {
		tail := r.Stderr
		if i := strings.LastIndex(tail, "Traceback (most recent call last)"); i >= 0 {
			tail = tail[i:]
		}
		for _, m := range []struct{ marker, limit string }{
			{"MemoryError", LimitMemory},
			{"Cannot allocate memory", LimitMemory},
			{"Unable to allocate", LimitMemory},
			{"std::bad_alloc", LimitMemory},
			{"[Errno 11] Resource temporarily unavailable", LimitProcesses},
			{"can't start new thread", LimitProcesses},
			{"[Errno 27] File too large", LimitFileSize},
			{"[Errno 28] No space left on device", LimitWorkDir},
		} {
			if strings.Contains(tail, m.marker) {
				return m.limit
			}
		}
		// Processes that all fail to fork at once write their tracebacks
		// over one another, so the last one may not end with its reason.
		if strings.Count(r.Stderr, "Traceback (most recent call last)") > 1 &&
			(strings.Contains(r.Stderr, "[Errno 11] Resource temporarily unavailable") || strings.Contains(r.Stderr, "can't start new thread")) {
			return LimitProcesses
		}
	}
	if r.StdoutTruncated || r.StderrTruncated {
		return LimitOutput
	}
	return ""
}

// command is bubblewrap with the sandbox's options, extra ones, then the
// program to run inside.
func (s *Sandbox) command(ctx context.Context, extra []string, prog string, args ...string) *exec.Cmd {
	argv := append(s.bwrapArgs(extra), "--")
	argv = append(argv, prog)
	argv = append(argv, args...)
	cmd := exec.CommandContext(ctx, s.bwrap, argv...)
	// Bubblewrap's own environment is what its init process (PID 1 in
	// the sandbox) shows in /proc/1/environ: nothing of Sova's.
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8"}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: s.asUser}
	// At the wall-clock limit or when ctx ends, the whole process group
	// (bubblewrap) is killed; the sandbox dies with it (--die-with-parent)
	// and its PID namespace with its init.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	return cmd
}

// dataPipe is a pipe for --ro-bind-data: bubblewrap reads data from it
// and copies it into the sandbox. A goroutine writes it; it ends when all
// is written, or when bubblewrap is gone without reading (EPIPE).
func dataPipe(data []byte) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	go func() {
		_, _ = w.Write(data)
		_ = w.Close()
	}()
	return r, nil
}

func closeAll(files []*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}
