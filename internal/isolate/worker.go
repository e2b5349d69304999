package isolate

import (
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
)

// workerArg, as the first argument, starts the program as a worker:
// workerArg kind memory-bytes cpu-seconds.
const workerArg = "__sova_isolated_parser"

// Exit codes of a worker that stops itself.
const (
	exitUsage = 70 // bad arguments or unknown kind
	exitCPU   = 71 // CPU time limit reached (SIGXCPU)
	exitIO    = 72 // stdin or stdout failed
)

// Main must be called first thing in main (and in TestMain of a test
// binary whose tests parse through Run). In a worker process it runs the
// worker and exits; otherwise it returns at once and enables Run.
func Main() {
	hooked.Store(true)
	if len(os.Args) < 2 || os.Args[1] != workerArg {
		return
	}
	os.Exit(runWorker(os.Args[2:]))
}

func runWorker(args []string) int {
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "isolate: worker arguments: kind memory cpu")
		return exitUsage
	}
	w, ok := lookup(args[0])
	mem, err1 := strconv.ParseInt(args[1], 10, 64)
	cpu, err2 := strconv.ParseInt(args[2], 10, 64)
	if !ok || err1 != nil || err2 != nil || mem <= 0 || cpu <= 0 {
		fmt.Fprintf(os.Stderr, "isolate: no worker %q in this program, or bad limits %q %q\n", args[0], args[1], args[2])
		return exitUsage
	}
	// Limits first, before a byte of input is read.
	runtime.GOMAXPROCS(1)
	debug.SetGCPercent(100)
	debug.SetMemoryLimit(goMemory() + mem)
	if err := limitProcess(mem, cpu); err != nil {
		fmt.Fprintln(os.Stderr, "isolate: setting limits:", err)
		return exitUsage
	}

	input, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "isolate: reading input:", err)
		return exitIO
	}
	out, ferr := call(w.fn, input)
	rep := reply{OutLen: len(out), Known: -1}
	if ferr != nil {
		out, rep.OutLen = nil, 0
		rep.Err = ferr.Error()
		for i, k := range w.known {
			if errors.Is(ferr, k) {
				rep.Known = i
				break
			}
		}
	}
	if err := gob.NewEncoder(os.Stdout).Encode(rep); err != nil {
		fmt.Fprintln(os.Stderr, "isolate: writing the result:", err)
		return exitIO
	}
	if _, err := os.Stdout.Write(out); err != nil {
		fmt.Fprintln(os.Stderr, "isolate: writing the result:", err)
		return exitIO
	}
	return 0
}

// call runs fn, turning a panic into an error.
func call(fn Func, input []byte) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("the parser failed: %v", r)
		}
	}()
	return fn(input)
}

// goMemory is the memory the Go runtime holds now.
func goMemory() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		return int64(s[0].Value.Uint64())
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.Sys)
}
