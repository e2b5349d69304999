package tools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/sandbox"
	"github.com/sova-ai/sova/internal/tools"
)

var png = append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{0xAB}, 3000)...)

// fakeSandbox answers every cell with result.
type fakeSandbox struct {
	result *sandbox.Result
	err    error
	codes  []string
}

func (f *fakeSandbox) Run(_ context.Context, code string) (*sandbox.Result, error) {
	f.codes = append(f.codes, code)
	return f.result, f.err
}

func (f *fakeSandbox) Config() sandbox.Config {
	return sandbox.Config{CPUTime: 30 * time.Second, WallTime: time.Minute, Memory: 1 << 30, FileBytes: 16 << 20,
		Processes: 32, OutputBytes: 256 << 10, WorkBytes: 64 << 20}
}

func TestCodeInterpreter(t *testing.T) {
	sb := &fakeSandbox{result: &sandbox.Result{
		Stdout: "mean 4.5\n", Stderr: "", ExitCode: 0, Duration: 1200 * time.Millisecond,
		Files: []sandbox.File{
			{Name: "chart_1.png", Size: int64(len(png)), MIME: "image/png", Data: png},
			{Name: "data.csv", Size: 4, MIME: "text/csv; charset=utf-8", Data: []byte("a,b\n")},
		},
	}}
	files := tools.NewCodeFiles(0)
	tool := tools.CodeInterpreter(sb, tools.CodeOptions{Files: files})
	if tool.Name() != "code_interpreter" || !strings.Contains(tool.Description(), "numpy, pandas and matplotlib") ||
		!strings.Contains(tool.Description(), "30s of CPU time, 1m0s in all, 1.0 GiB of memory") {
		t.Errorf("tool %s: %s", tool.Name(), tool.Description())
	}
	if req := tool.Schema().Required; len(req) != 2 || req[0] != "title" || req[1] != "code" {
		t.Errorf("required %v", req)
	}
	if title := tool.(agent.Titler).Title(json.RawMessage(`{"title":"Mean temperature","code":"print(1)"}`)); title != "Running code: Mean temperature" {
		t.Errorf("title %q", title)
	}
	out := call(t, tool, `{"title":"Mean temperature","code":"print('mean', 4.5)"}`)
	if len(sb.codes) != 1 || sb.codes[0] != "print('mean', 4.5)" {
		t.Errorf("codes %q", sb.codes)
	}

	// The model reads the output and the chart list, never the bytes.
	var model struct {
		Output   string
		Error    string
		ExitCode int
		Charts   []struct {
			Name string
			Size int64
		}
		Files []struct{ Name string }
		Note  string
	}
	if err := json.Unmarshal([]byte(out.Text), &model); err != nil {
		t.Fatalf("%v: %s", err, out.Text)
	}
	if model.Output != "mean 4.5" || model.ExitCode != 0 || len(model.Charts) != 1 || model.Charts[0].Name != "chart_1.png" ||
		model.Charts[0].Size != int64(len(png)) || len(model.Files) != 1 || model.Files[0].Name != "data.csv" ||
		!strings.Contains(model.Note, "charts are shown to the person") {
		t.Errorf("model text %s", out.Text)
	}
	if strings.Contains(out.Text, "PNG") || strings.Contains(out.Text, "iVBOR") || len(out.Text) > 1000 {
		t.Errorf("the model text carries the image: %s", out.Text)
	}
	if out.Summary != "Ran in 1.2 s, 1 chart" {
		t.Errorf("summary %q", out.Summary)
	}

	// The stream's data: the seed's completed event, with where the UI
	// fetches each chart, and no bytes either.
	var data tools.CodeResult
	if err := json.Unmarshal(out.Data, &data); err != nil {
		t.Fatal(err)
	}
	if data.Kind != "code" || !strings.HasPrefix(data.CodeID, "code_") || data.Title != "Mean temperature" || data.Status != "completed" ||
		data.Result.Stdout != "mean 4.5\n" || len(data.Charts) != 1 || data.Charts[0].Type != "chart" || data.Charts[0].Format != "png" ||
		data.Charts[0].File != data.CodeID+"/chart_1.png" || len(data.Files) != 1 || data.Files[0].Format != "csv" || data.DurationMS != 1200 {
		t.Errorf("data %s", out.Data)
	}
	if bytes.Contains(out.Data, []byte("PNG")) || bytes.Contains(out.Data, []byte("iVBOR")) {
		t.Errorf("the stream data carries the image: %s", out.Data)
	}
	if f, ok := files.Get(data.Charts[0].File); !ok || !bytes.Equal(f.Data, png) {
		t.Errorf("chart not kept for the run: %v", ok)
	}
	if ids := files.IDs(); len(ids) != 2 {
		t.Errorf("kept %v", ids)
	}
}

func TestCodeInterpreterLimits(t *testing.T) {
	long := strings.Repeat("x", 50000) + "END"
	sb := &fakeSandbox{result: &sandbox.Result{
		Stdout: long, Stderr: "Traceback …\nMemoryError", ExitCode: 1, LimitHit: sandbox.LimitMemory, Duration: time.Second,
		FilesSkipped: []string{"huge.bin"},
	}}
	files := tools.NewCodeFiles(10)
	sb.result.Files = []sandbox.File{{Name: "chart_1.png", Size: int64(len(png)), MIME: "image/png", Data: png}}
	out := call(t, tools.CodeInterpreter(sb, tools.CodeOptions{Files: files, MaxChars: 1000}), `{"title":"t","code":"x = bytearray(10**10)"}`)
	if len(out.Text) > 2000 || !strings.Contains(out.Text, "END") || !strings.Contains(out.Text, "characters left out") ||
		!strings.Contains(out.Text, "MemoryError") || !strings.Contains(out.Text, "needed more than 1.0 GiB of memory") ||
		!strings.Contains(out.Text, "Not returned (too many or too large): huge.bin") {
		t.Errorf("model text %s", out.Text)
	}
	if out.Summary != "Stopped at the memory limit in 1.0 s, 1 chart" {
		t.Errorf("summary %q", out.Summary)
	}
	var data tools.CodeResult
	_ = json.Unmarshal(out.Data, &data)
	if data.Status != "error" || data.LimitHit != "memory" || data.Charts[0].File != "" || len(files.IDs()) != 0 ||
		len(data.Result.Stdout) > 5000 || !strings.HasSuffix(data.Result.Stdout, "END") {
		t.Errorf("a chart over the run's limit: %s", out.Data)
	}

	// A sandbox that fails is the tool's error; an empty cell is refused.
	failing := &fakeSandbox{err: errors.New("bwrap: boom")}
	tool := tools.CodeInterpreter(failing, tools.CodeOptions{})
	if _, err := tool.(agent.Runner).Run(t.Context(), json.RawMessage(`{"title":"t","code":"print(1)"}`)); err == nil ||
		!strings.Contains(err.Error(), "the code could not be run: bwrap: boom") {
		t.Errorf("failing sandbox: %v", err)
	}
	if out := call(t, tool, `{"title":"t","code":"  "}`); !strings.HasPrefix(out.Text, "Error: give the Python code") || len(failing.codes) != 1 {
		t.Errorf("empty code: %q", out.Text)
	}
}

func TestCodeToolsWithdrawn(t *testing.T) {
	var rec eventtest.Recorder
	_, err := sandbox.New(t.Context(), sandbox.Config{Bwrap: "/nonexistent/bwrap"})
	if got := tools.CodeTools(nil, err, &rec, tools.CodeOptions{}); got != nil {
		t.Errorf("tools offered without a sandbox: %v", got)
	}
	st := rec.Filter(event.TypeStatus)
	if len(st) != 1 || st[0].Status.Stage != "tools" || st[0].Status.Detail != "SOVA_SANDBOX_ENABLED, SOVA_SANDBOX_BWRAP, SOVA_SANDBOX_PYTHON" ||
		st[0].Status.Message != "code_interpreter is not available: the code sandbox cannot run on this server: bubblewrap (/nonexistent/bwrap) is not installed" {
		t.Errorf("status %+v", st)
	}
	if s := tools.CodeStatus(nil, err); s.Available || s.Name != "code_interpreter" || s.Settings[0] != "SOVA_SANDBOX_ENABLED" {
		t.Errorf("CodeStatus %+v", s)
	}
}

var realSandbox struct {
	once sync.Once
	sb   *sandbox.Sandbox
	err  error
}

// TestCodeInterpreterSandbox runs the tool on the real sandbox: a chart
// comes back to the run as PNG bytes and to the model as a name.
func TestCodeInterpreterSandbox(t *testing.T) {
	realSandbox.once.Do(func() { realSandbox.sb, realSandbox.err = sandbox.New(context.Background(), sandbox.Config{}) })
	var rec eventtest.Recorder
	got := tools.CodeTools(realSandbox.sb, realSandbox.err, &rec, tools.CodeOptions{Files: tools.NewCodeFiles(0)})
	if errors.Is(realSandbox.err, sandbox.ErrUnavailable) {
		if len(got) != 0 || len(rec.Filter(event.TypeStatus)) != 1 {
			t.Errorf("unavailable sandbox: %d tools, events %+v", len(got), rec.Events())
		}
		t.Skipf("the code sandbox cannot run here: %v", realSandbox.err)
	}
	if realSandbox.err != nil || len(got) != 1 || len(rec.Events()) != 0 {
		t.Fatalf("tools %v, err %v, events %+v", got, realSandbox.err, rec.Events())
	}
	if st := tools.CodeStatus(realSandbox.sb, nil); !st.Available || !strings.HasPrefix(st.Provider, "python sandbox (bubblewrap ") {
		t.Errorf("CodeStatus %+v", st)
	}
	files := tools.NewCodeFiles(0)
	tool := tools.CodeInterpreter(realSandbox.sb, tools.CodeOptions{Files: files})
	args, _ := json.Marshal(tools.CodeArgs{Title: "Squares", Code: `import matplotlib.pyplot as plt
import pandas as pd
df = pd.DataFrame({"n": range(1, 6)})
df["square"] = df.n ** 2
print(df.square.sum())
plt.bar(df.n, df.square)
plt.show()
`})
	out := call(t, tool, string(args))
	t.Logf("the model reads: %s\nthe stream shows: %s (%s)", out.Text, out.Data, out.Summary)
	var data tools.CodeResult
	if err := json.Unmarshal(out.Data, &data); err != nil {
		t.Fatal(err)
	}
	if data.Status != "completed" || data.Result.Stdout != "55\n" || len(data.Charts) != 1 || data.Charts[0].Name != "chart_1.png" {
		t.Fatalf("data %s\nmodel %s", out.Data, out.Text)
	}
	f, ok := files.Get(data.Charts[0].File)
	if !ok || !bytes.HasPrefix(f.Data, []byte("\x89PNG\r\n\x1a\n")) || strings.Contains(out.Text, string(f.Data[:8])) {
		t.Errorf("chart %v %q; model text %s", ok, f.Data[:min(8, len(f.Data))], out.Text)
	}
}
