// Package isolate runs parsers of untrusted bytes (PDF, DOCX, HTML files
// uploaded or found on the web) in a child process, under a deadline and a
// memory cap that hold even when the parser never returns.
//
// A goroutine cannot be stopped from outside, so a library that loops
// forever on a crafted file (a PDF page tree that points to itself) would
// burn a core until the process exits, whatever the context says. A child
// process can be killed. Run starts the current executable again as a
// worker (Main recognises it), hands it the input on stdin, and reads the
// result from its stdout. The worker limits itself before it reads a byte:
// address space (RLIMIT_AS) and a Go memory limit of Limits.Memory above
// what it holds at start, CPU time (RLIMIT_CPU) a little over
// Limits.Timeout, one thread running Go code (GOMAXPROCS=1). The parent
// kills it at the deadline or when the context ends, and a worker dies
// with its parent (Linux). It gets no environment beyond the Go runtime's
// own variables, so no API keys.
//
// The worker functions are registered by kind (Register, from an init
// function of the package that owns the parser) and run in the worker with
// the registry of the same binary. A program whose parsers go through Run
// must call Main first thing in main, and a test binary first thing in
// TestMain; Run refuses to work otherwise rather than parse in-process.
//
// Starting a worker costs what starting the program costs (package
// initialisation; see docs/benchmarks.md), so Run is for parsers whose
// input is rare or slow to parse anyway, not for the hot path.
package isolate

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dustin/go-humanize"
)

// Defaults of Limits (SOVA_PARSE_TIMEOUT, SOVA_PARSE_MEMORY).
const (
	DefaultTimeout = 20 * time.Second
	DefaultMemory  = 512 << 20
	// DefaultMaxOutput bounds the result a worker may send back.
	DefaultMaxOutput = 256 << 20
)

// Limits bound one parse. Zero fields take the defaults.
type Limits struct {
	// Timeout is the wall-clock limit of one parse, the worker's start
	// included. CPU time is limited to a little more.
	Timeout time.Duration
	// Memory is how much memory the parse may take beyond what the worker
	// holds when it starts (the program's own initialisation).
	Memory int64
	// MaxOutput bounds the size of the result.
	MaxOutput int64
}

func (l Limits) withDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.Memory <= 0 {
		l.Memory = DefaultMemory
	}
	if l.MaxOutput <= 0 {
		l.MaxOutput = DefaultMaxOutput
	}
	return l
}

var (
	// ErrTimeout is matched (errors.Is) when a parse ran out of time.
	ErrTimeout = errors.New("parse timed out")
	// ErrMemory is matched when a parse needed more memory than allowed.
	ErrMemory = errors.New("parse ran out of memory")
	// ErrCrashed is matched when the worker died without an answer for
	// another reason (a fatal error in the parser, a stack overflow).
	ErrCrashed = errors.New("the parser crashed")
	// ErrUnavailable is matched when no worker can be started: Main was
	// not called at start-up, or the executable cannot be found. Untrusted
	// bytes are then not parsed at all.
	ErrUnavailable = errors.New("no isolated parser process is available")
)

// LimitError reports a parse stopped at one of its limits. It matches
// ErrTimeout or ErrMemory.
type LimitError struct {
	What    string        // what was parsed, e.g. "the PDF"
	Timeout time.Duration // set when the time ran out
	Memory  int64         // set when the memory ran out
}

func (e *LimitError) Error() string {
	if e.Timeout > 0 {
		return fmt.Sprintf("parsing %s took longer than %s", e.What, e.Timeout)
	}
	return fmt.Sprintf("%s needs more than %s of memory", e.What, humanize.IBytes(uint64(e.Memory)))
}

// Is makes errors.Is(err, ErrTimeout) or errors.Is(err, ErrMemory) true.
func (e *LimitError) Is(target error) bool {
	return target == ErrTimeout && e.Timeout > 0 || target == ErrMemory && e.Memory > 0
}

// Func is a worker function: it parses input and returns the encoded
// result. It runs in the worker process, never in the caller's.
type Func func(input []byte) ([]byte, error)

type worker struct {
	what  string
	fn    Func
	known []error
}

var (
	regMu    sync.RWMutex
	registry = map[string]worker{}
)

// Register adds a worker function under kind. what names the input in
// errors ("the PDF"). An error the function returns reaches the caller as
// its message; when it matches (errors.Is) one of known, the caller's
// error matches that one too. Register is meant for init functions; it
// panics when kind is taken.
func Register(kind, what string, fn Func, known ...error) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, ok := registry[kind]; ok {
		panic("isolate: kind " + kind + " registered twice")
	}
	registry[kind] = worker{what: what, fn: fn, known: known}
}

func lookup(kind string) (worker, bool) {
	regMu.RLock()
	defer regMu.RUnlock()
	w, ok := registry[kind]
	return w, ok
}

// hooked is set by Main: this program starts workers through it.
var hooked atomic.Bool

// slots bounds the workers running at once, and so the memory they may
// take together (slots × Limits.Memory).
var slots = make(chan struct{}, max(2, runtime.NumCPU()))

// Usage is what one worker used.
type Usage struct {
	Wall    time.Duration
	CPU     time.Duration // user and system
	MaxRSS  int64         // peak resident memory, bytes (0 where unknown)
	ExitErr string        // how the worker ended, when not normally
}

// reply is what a worker writes to its stdout, followed by the OutLen
// bytes of its result. The result travels raw after the gob header, so
// the parent hands back a slice of what it read rather than a decoded
// copy (a large document's text would otherwise be in memory three times).
type reply struct {
	OutLen int
	Err    string
	Known  int // index into the worker's known errors, or -1
}

// Run parses input with the worker function registered under kind, in a
// child process under lim. It returns the function's result, or an
// error: a *LimitError (ErrTimeout, ErrMemory), the context's error when
// ctx ends first, ErrCrashed, ErrUnavailable, or the function's own
// error.
func Run(ctx context.Context, lim Limits, kind string, input []byte) ([]byte, error) {
	out, _, err := RunUsage(ctx, lim, kind, input)
	return out, err
}

// RunUsage is Run that also reports what the worker used.
func RunUsage(ctx context.Context, lim Limits, kind string, input []byte) ([]byte, Usage, error) {
	return RunReaderUsage(ctx, lim, kind, bytes.NewReader(input))
}

// RunReader is Run with the input read from r as the worker takes it, so
// that a large file goes from disk to the worker without being held in
// this process.
func RunReader(ctx context.Context, lim Limits, kind string, r io.Reader) ([]byte, error) {
	out, _, err := RunReaderUsage(ctx, lim, kind, r)
	return out, err
}

// RunReaderUsage is RunReader that also reports what the worker used.
func RunReaderUsage(ctx context.Context, lim Limits, kind string, input io.Reader) ([]byte, Usage, error) {
	var u Usage
	w, ok := lookup(kind)
	if !ok {
		return nil, u, fmt.Errorf("isolate: no worker registered for %q", kind)
	}
	if ctx.Err() != nil {
		return nil, u, fmt.Errorf("parsing %s: %w", w.what, context.Cause(ctx))
	}
	lim = lim.withDefaults()
	if !hooked.Load() {
		return nil, u, fmt.Errorf("parsing %s: %w: isolate.Main was not called when the program started", w.what, ErrUnavailable)
	}
	exe, err := executable()
	if err != nil {
		return nil, u, fmt.Errorf("parsing %s: %w: %v", w.what, ErrUnavailable, err)
	}
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return nil, u, fmt.Errorf("parsing %s: %w", w.what, context.Cause(ctx))
	}
	defer func() { <-slots }()

	rctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	cpu := int64(lim.Timeout/time.Second) + 2
	cmd := exec.CommandContext(rctx, exe, workerArg, kind,
		strconv.FormatInt(lim.Memory, 10), strconv.FormatInt(cpu, 10))
	cmd.Env = childEnv()
	cmd.Stdin = input
	stdout := &cappedBuffer{max: lim.MaxOutput}
	stderr := &tailBuffer{max: 4 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = sysProcAttr()
	cmd.WaitDelay = time.Second
	start := time.Now()
	runErr := startAndWait(cmd)
	u.Wall = time.Since(start)
	if ps := cmd.ProcessState; ps != nil {
		u.CPU = ps.UserTime() + ps.SystemTime()
		u.MaxRSS = maxRSS(ps)
		if !ps.Success() {
			u.ExitErr = ps.String()
		}
	}

	switch {
	case ctx.Err() != nil:
		return nil, u, fmt.Errorf("parsing %s: %w", w.what, context.Cause(ctx))
	case stdout.over:
		return nil, u, fmt.Errorf("parsing %s: %w: its result is larger than %s", w.what, ErrMemory, humanize.IBytes(uint64(lim.MaxOutput)))
	case rctx.Err() != nil:
		return nil, u, &LimitError{What: w.what, Timeout: lim.Timeout}
	}
	if runErr != nil {
		var ee *exec.ExitError
		if !errors.As(runErr, &ee) {
			return nil, u, fmt.Errorf("parsing %s: %w: %v", w.what, ErrUnavailable, runErr)
		}
		msg := stderr.String()
		switch {
		case ee.ExitCode() == exitCPU || killedBySignal(ee) && u.CPU >= time.Duration(cpu-1)*time.Second:
			// SIGXCPU before the handler ran, or SIGKILL at the hard limit.
			return nil, u, &LimitError{What: w.what, Timeout: lim.Timeout}
		case outOfMemory(msg):
			return nil, u, &LimitError{What: w.what, Memory: lim.Memory}
		case ee.ExitCode() == exitUsage:
			return nil, u, fmt.Errorf("parsing %s: %w: %s", w.what, ErrUnavailable, lastLine(msg))
		}
		return nil, u, fmt.Errorf("parsing %s: %w (%s: %s)", w.what, ErrCrashed, ee, firstFatal(msg))
	}
	var rep reply
	all := stdout.Bytes()
	r := bytes.NewReader(all) // an io.ByteReader: gob reads no further than the header
	if err := gob.NewDecoder(r).Decode(&rep); err != nil {
		return nil, u, fmt.Errorf("parsing %s: %w: unreadable answer from the worker: %v (%s)", w.what, ErrCrashed, err, lastLine(stderr.String()))
	}
	out := all[len(all)-r.Len():]
	if rep.OutLen != len(out) {
		return nil, u, fmt.Errorf("parsing %s: %w: the worker's answer is %d bytes, not the %d it announced (%s)", w.what, ErrCrashed, len(out), rep.OutLen, lastLine(stderr.String()))
	}
	if rep.Err != "" {
		re := &remoteError{msg: rep.Err}
		if rep.Known >= 0 && rep.Known < len(w.known) {
			re.is = w.known[rep.Known]
		}
		return nil, u, re
	}
	return out, u, nil
}

// startAndWait starts cmd and waits for it. The start is kept on one OS
// thread: on Linux the worker is killed when the thread that started it
// ends (Pdeathsig), and a thread locked for the start is not one the
// runtime ends afterwards.
func startAndWait(cmd *exec.Cmd) error {
	runtime.LockOSThread()
	err := cmd.Start()
	runtime.UnlockOSThread()
	if err != nil {
		return err
	}
	return cmd.Wait()
}

// remoteError is an error returned by a worker function.
type remoteError struct {
	msg string
	is  error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.is }

var (
	exeOnce sync.Once
	exePath string
	exeErr  error
)

// executable is the program to start as a worker. On Linux /proc/self/exe
// names the running binary even after the file was replaced on disk (an
// upgrade while the server runs).
func executable() (string, error) {
	exeOnce.Do(func() {
		if runtime.GOOS == "linux" {
			if _, err := os.Stat("/proc/self/exe"); err == nil {
				exePath = "/proc/self/exe"
				return
			}
		}
		exePath, exeErr = os.Executable()
	})
	return exePath, exeErr
}

// childEnv passes only the Go runtime's own settings (race detector and
// coverage options in tests, GODEBUG): no keys or tokens reach a parser.
func childEnv() []string {
	// No collection while the program initialises (its packages allocate
	// tens of MiB, mostly kept): the worker sets GOGC back at its start.
	env := []string{"GOGC=off"} // not nil: a nil Env would inherit everything
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GODEBUG", "GORACE", "GOCOVERDIR", "GOTRACEBACK", "TMPDIR":
			env = append(env, kv)
		}
	}
	return env
}

// outOfMemory recognises the Go runtime's report of a failed allocation
// (under RLIMIT_AS, mmap fails and the runtime throws; a race-detector
// build reports it as address space collisions).
func outOfMemory(stderr string) bool {
	for _, s := range []string{"out of memory", "cannot allocate memory", "failed to create new OS thread",
		"too many address space collisions", "ThreadSanitizer failed to allocate"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// firstFatal is the line of a crash report that says what happened.
func firstFatal(s string) string {
	for line := range strings.SplitSeq(s, "\n") {
		if strings.HasPrefix(line, "fatal error:") || strings.HasPrefix(line, "panic:") || strings.HasPrefix(line, "runtime:") {
			return strings.TrimSpace(line)
		}
	}
	if l := lastLine(s); l != "" {
		return l
	}
	return "no message"
}

// cappedBuffer keeps up to max bytes and notes when more came.
//
// Once the worker's header has come, the buffer is grown at once to the
// size it announces: grown by doubling, a result of 40 MiB passed through
// buffers of 32 and 64 MiB held together, most of a DOCX upload's peak.
type cappedBuffer struct {
	bytes.Buffer
	max   int64
	over  bool
	sized bool // the header was read (or given up on) and the buffer grown
}

// ReadFrom copies through Write: bytes.Buffer's own ReadFrom, which
// exec's copy of the worker's output would use, passes the cap by and
// grows the buffer by doubling.
func (b *cappedBuffer) ReadFrom(r io.Reader) (int64, error) {
	buf := make([]byte, 32<<10)
	var total int64
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := b.Write(buf[:n]); werr != nil {
				return total, werr
			}
			total += int64(n)
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// headerWithin is how far into the output the header is looked for.
const headerWithin = 64 << 10

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if int64(b.Len()+len(p)) > b.max {
		b.over = true
		return 0, errors.New("worker output over the limit")
	}
	n, err := b.Buffer.Write(p)
	if !b.sized {
		r := bytes.NewReader(b.Bytes())
		var rep reply
		switch {
		case gob.NewDecoder(r).Decode(&rep) == nil:
			b.sized = true
			head := b.Len() - r.Len()
			if need := int64(head) + int64(rep.OutLen); rep.OutLen > 0 && need <= b.max {
				b.Grow(int(need) - b.Len())
			}
		case b.Len() >= headerWithin:
			b.sized = true
		}
	}
	return n, err
}

// tailBuffer keeps the first and the last bytes written, up to max each.
type tailBuffer struct {
	head, tail []byte
	max        int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if room := b.max - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	b.tail = append(b.tail, p...)
	if len(b.tail) > b.max {
		b.tail = append(b.tail[:0], b.tail[len(b.tail)-b.max:]...)
	}
	return n, nil
}

func (b *tailBuffer) String() string {
	if len(b.tail) == 0 {
		return string(b.head)
	}
	return string(b.head) + "\n…\n" + string(b.tail)
}
