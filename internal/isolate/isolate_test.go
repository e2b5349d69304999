package isolate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	Main()
	os.Exit(m.Run())
}

var errKnown = errors.New("a known failure")

var sink [][]byte

func init() {
	Register("test.echo", "the echo", func(in []byte) ([]byte, error) {
		return bytes.ToUpper(in), nil
	})
	Register("test.spin", "the loop", func([]byte) ([]byte, error) {
		for n := 0; ; n++ {
			_ = n
		}
	})
	Register("test.grow", "the hoard", func([]byte) ([]byte, error) {
		for {
			b := make([]byte, 8<<20)
			for i := range b {
				b[i] = 1
			}
			sink = append(sink, b)
		}
	})
	Register("test.huge", "the huge buffer", func([]byte) ([]byte, error) {
		b := make([]byte, 4<<30)
		b[len(b)-1] = 1
		return b[:1], nil
	})
	Register("test.panic", "the panic", func(in []byte) ([]byte, error) {
		return in[:cap(in)+1], nil // out of range
	})
	Register("test.known", "the known", func([]byte) ([]byte, error) {
		return nil, fmt.Errorf("the input is bad: %w", errKnown)
	}, errKnown)
	Register("test.overflow", "the recursion", func([]byte) ([]byte, error) {
		debug.SetMaxStack(1 << 20)
		return nil, recurse(0)
	})
	Register("test.env", "the environment", func([]byte) ([]byte, error) {
		return []byte(strings.Join(os.Environ(), "\n")), nil
	})
}

func recurse(n int) error {
	if n < 0 {
		return nil
	}
	var pad [256]byte
	pad[n%256] = 1
	return recurse(n + int(pad[0]) + 1)
}

func TestRunReturnsTheResult(t *testing.T) {
	out, u, err := RunUsage(t.Context(), Limits{}, "test.echo", []byte("hello"))
	if err != nil || string(out) != "HELLO" {
		t.Fatalf("out %q, err %v", out, err)
	}
	t.Logf("one worker: %s wall, %s CPU, %d MiB peak", u.Wall, u.CPU, u.MaxRSS>>20)
}

func TestTimeoutStopsALoop(t *testing.T) {
	start := time.Now()
	_, err := Run(t.Context(), Limits{Timeout: time.Second}, "test.spin", nil)
	if !errors.Is(err, ErrTimeout) || err.Error() != "parsing the loop took longer than 1s" {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("returned after %s", d)
	}
}

func TestCancelStopsALoop(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	_, err := Run(ctx, Limits{Timeout: time.Minute}, "test.spin", nil)
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("returned %s after the start, cancelled at 300ms", d)
	}
}

func TestMemoryCap(t *testing.T) {
	for _, kind := range []string{"test.grow", "test.huge"} {
		t.Run(kind, func(t *testing.T) {
			_, u, err := RunUsage(t.Context(), Limits{Memory: 64 << 20, Timeout: 30 * time.Second}, kind, nil)
			if !errors.Is(err, ErrMemory) {
				t.Fatalf("err = %v", err)
			}
			if !strings.HasSuffix(err.Error(), "needs more than 64 MiB of memory") {
				t.Errorf("message %q", err)
			}
			t.Logf("%v; peak %d MiB", err, u.MaxRSS>>20)
			if u.MaxRSS > 400<<20 {
				t.Errorf("the worker reached %d MiB", u.MaxRSS>>20)
			}
		})
	}
}

func TestWorkerErrors(t *testing.T) {
	_, err := Run(t.Context(), Limits{}, "test.known", nil)
	if !errors.Is(err, errKnown) || err.Error() != "the input is bad: a known failure" {
		t.Errorf("known: %v", err)
	}
	_, err = Run(t.Context(), Limits{}, "test.panic", nil)
	if err == nil || !strings.Contains(err.Error(), "the parser failed: runtime error: slice bounds out of range") {
		t.Errorf("panic: %v", err)
	}
	_, err = Run(t.Context(), Limits{}, "test.overflow", nil)
	if !errors.Is(err, ErrCrashed) || !strings.Contains(err.Error(), "stack") {
		t.Errorf("overflow: %v", err)
	}
	if _, err := Run(t.Context(), Limits{}, "test.none", nil); err == nil {
		t.Error("unknown kind: no error")
	}
}

func TestWorkerGetsNoSecrets(t *testing.T) {
	t.Setenv("SOVA_LLM_API_KEY", "sk-secret")
	t.Setenv("OPENAI_API_KEY", "sk-secret")
	out, err := Run(t.Context(), Limits{}, "test.echo", nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = out
	env, err := Run(t.Context(), Limits{}, "test.env", nil)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(env, []byte("sk-secret")) {
		t.Error("the worker's environment holds the key")
	}
}

func TestRunRefusesWithoutMain(t *testing.T) {
	hooked.Store(false)
	defer hooked.Store(true)
	_, err := Run(t.Context(), Limits{}, "test.echo", nil)
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v", err)
	}
}

// BenchmarkRun measures what isolation adds to one parse in this test
// binary: starting a worker, passing 64 KiB in and out, waiting for it.
func BenchmarkRun(b *testing.B) {
	in := bytes.Repeat([]byte("x"), 64<<10)
	var cpu time.Duration
	for b.Loop() {
		_, u, err := RunUsage(context.Background(), Limits{}, "test.echo", in)
		if err != nil {
			b.Fatal(err)
		}
		cpu += u.CPU
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/1000, "worker-cpu-ms/op")
}

// A result over MaxOutput is refused, however the result is copied from
// the worker; one within it comes back whole, from a reader as from bytes.
func TestOutputCap(t *testing.T) {
	in := bytes.Repeat([]byte("abcdefgh"), 256<<10) // 2 MiB
	if _, err := RunReader(t.Context(), Limits{MaxOutput: 1 << 20}, "test.echo", bytes.NewReader(in)); !errors.Is(err, ErrMemory) || !strings.Contains(err.Error(), "result is larger than") {
		t.Errorf("a 2 MiB result under a 1 MiB cap: err %v", err)
	}
	out, err := RunReader(t.Context(), Limits{MaxOutput: 4 << 20}, "test.echo", bytes.NewReader(in))
	if err != nil || !bytes.Equal(out, bytes.ToUpper(in)) {
		t.Errorf("a 2 MiB result under a 4 MiB cap: %d bytes, err %v", len(out), err)
	}
}
