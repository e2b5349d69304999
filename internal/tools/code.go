package tools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/sandbox"
)

// CodeInterpreterName is the code tool's name (seed 000 §2.4 calls it
// codeRunner).
const CodeInterpreterName = "code_interpreter"

// CodeRunner runs cells of Python code in the sandbox: *sandbox.Sandbox.
type CodeRunner interface {
	Run(ctx context.Context, code string) (*sandbox.Result, error)
	// Config gives the limits, which the tool's description states.
	Config() sandbox.Config
}

// CodeOptions tune a code_interpreter tool.
type CodeOptions struct {
	// Name is the tool's name (default code_interpreter).
	Name string
	// Description replaces the tool's description.
	Description string
	// MaxChars bounds stdout, and stderr, as the model reads them
	// (default 8000 characters each); the beginning and the end are kept.
	MaxChars int
	// Files keeps the files the code writes (charts) for the run, for
	// people to see; nil: they are listed, and dropped.
	Files *CodeFiles
}

// CodeArgs are code_interpreter's arguments (seed 000 §2.4: title, code).
type CodeArgs struct {
	Title string `json:"title" jsonschema:"a short title for what the code does, shown to people"`
	Code  string `json:"code" jsonschema:"Python 3 code to run; print() what you need to see"`
}

// CodeChart is a file a cell wrote, as the model and the stream see it:
// never its bytes.
type CodeChart struct {
	// Type is "chart" for images, "file" for the rest (seed: type, format).
	Type   string `json:"type"`
	Format string `json:"format"`
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	MIME   string `json:"mime,omitempty"`
	// File is the file's id in the run's CodeFiles, where the UI fetches
	// it; empty when it was not kept.
	File string `json:"file,omitempty"`
}

// CodeResult is a code_interpreter call's structured output, the
// tool-result event's data (seed 000 §2.4's completed event: kind,
// codeId, title, code, status, result, charts).
type CodeResult struct {
	Kind   string `json:"kind"` // "code"
	CodeID string `json:"codeId"`
	Title  string `json:"title"`
	Code   string `json:"code"`
	// Status is "completed" when the code ran to its end with exit
	// status 0, "error" otherwise.
	Status string `json:"status"`
	Result struct {
		Stdout   string `json:"stdout"`
		Stderr   string `json:"stderr"`
		ExitCode int    `json:"exitCode"`
	} `json:"result"`
	Charts     []CodeChart `json:"charts"`
	Files      []CodeChart `json:"files,omitempty"`
	LimitHit   string      `json:"limitHit,omitempty"`
	DurationMS int64       `json:"durationMs"`
}

// CodeInterpreter is the tool that runs Python in the sandbox (seed 000
// §2.4 codeRunner). The model reads stdout, stderr (both clipped), the
// exit code and the list of charts and files — names and sizes, never
// their bytes; the bytes go to o.Files for the UI.
func CodeInterpreter(sb CodeRunner, o CodeOptions) agent.Tool {
	if o.Name == "" {
		o.Name = CodeInterpreterName
	}
	if o.MaxChars <= 0 {
		o.MaxChars = 8000
	}
	desc := o.Description
	if desc == "" {
		desc = CodeDescription(sb.Config())
	}
	ct := &codeTool{sb: sb, o: o}
	return agent.NewTool(o.Name, desc, ct.call, agent.WithTitle(func(a CodeArgs) string {
		if t := strings.TrimSpace(a.Title); t != "" {
			return "Running code: " + clip(t, 80)
		}
		return "Running code"
	}))
}

// CodeDescription is code_interpreter's description: what the code may
// use and its limits.
func CodeDescription(c sandbox.Config) string {
	return fmt.Sprintf("Run Python 3 code in a sandbox and get what it prints, its errors and its charts. "+
		"Use it to calculate, analyse data and draw charts; print() every result you need, since only printed output comes back. "+
		"Available: the Python standard library, numpy, pandas and matplotlib; nothing else can be installed. "+
		"Charts: draw with matplotlib and call plt.show() (or plt.savefig(\"name.png\")); each figure comes back as a PNG chart shown to the person. "+
		"Each call starts a fresh interpreter in an empty folder: variables and files do not carry over between calls. "+
		"No network access: put the data in the code. "+
		"Limits: %s of CPU time, %s in all, %s of memory, files up to %s.",
		c.CPUTime, c.WallTime, humanize.IBytes(uint64(c.Memory)), humanize.IBytes(uint64(c.FileBytes)))
}

type codeTool struct {
	sb CodeRunner
	o  CodeOptions
}

func (ct *codeTool) call(ctx context.Context, a CodeArgs) (agent.Output, error) {
	if strings.TrimSpace(a.Code) == "" {
		return agent.Text("Error: give the Python code to run."), nil
	}
	r, err := ct.sb.Run(ctx, a.Code)
	if err != nil {
		if ctx.Err() != nil {
			return agent.Output{}, ctx.Err()
		}
		return agent.Output{}, fmt.Errorf("the code could not be run: %w", err)
	}
	out := CodeResult{Kind: "code", CodeID: newCodeID(), Title: a.Title, Code: a.Code, Status: "completed",
		LimitHit: r.LimitHit, DurationMS: r.Duration.Milliseconds(), Charts: []CodeChart{}}
	if r.ExitCode != 0 || r.LimitHit != "" && r.LimitHit != sandbox.LimitOutput {
		out.Status = "error"
	}
	// The stream's copy is kept in the run's event log: clipped too, less.
	out.Result.Stdout, out.Result.Stderr = clipMiddle(r.Stdout, 4*ct.o.MaxChars), clipMiddle(r.Stderr, 4*ct.o.MaxChars)
	out.Result.ExitCode = r.ExitCode
	for _, f := range r.Files {
		c := CodeChart{Type: "file", Format: strings.TrimPrefix(strings.ToLower(path.Ext(f.Name)), "."), Name: f.Name, Size: f.Size, MIME: f.MIME}
		if strings.HasPrefix(f.MIME, "image/") {
			c.Type = "chart"
		}
		if ct.o.Files != nil {
			id := out.CodeID + "/" + f.Name
			if ct.o.Files.add(id, f) {
				c.File = id
			}
		}
		if c.Type == "chart" {
			out.Charts = append(out.Charts, c)
		} else {
			out.Files = append(out.Files, c)
		}
	}
	data, err := json.Marshal(out)
	if err != nil {
		return agent.Output{}, err
	}
	return agent.Output{Text: ct.modelText(r, out), Summary: codeSummary(r, out), Data: data}, nil
}

// modelText is what the model reads: the seed's {output, error, charts},
// with the exit code, the files and the limit that stopped the code.
func (ct *codeTool) modelText(r *sandbox.Result, out CodeResult) string {
	type file struct {
		Name string `json:"name"`
		Size int64  `json:"size"`
	}
	list := func(cs []CodeChart) []file {
		fs := []file{}
		for _, c := range cs {
			fs = append(fs, file{c.Name, c.Size})
		}
		return fs
	}
	m := struct {
		Output   string `json:"output"`
		Error    string `json:"error"`
		ExitCode int    `json:"exitCode"`
		Charts   []file `json:"charts"`
		Files    []file `json:"files,omitempty"`
		Note     string `json:"note,omitempty"`
	}{
		Output: clipMiddle(strings.TrimSpace(r.Stdout), ct.o.MaxChars), Error: clipMiddle(r.Stderr, ct.o.MaxChars),
		ExitCode: r.ExitCode, Charts: list(out.Charts), Files: list(out.Files),
	}
	if len(m.Files) == 0 {
		m.Files = nil
	}
	var notes []string
	if n := limitNote(r.LimitHit, ct.sb.Config()); n != "" {
		notes = append(notes, n)
	}
	if len(out.Charts) > 0 {
		notes = append(notes, "The charts are shown to the person; describe what they show rather than repeating them.")
	}
	if len(r.FilesSkipped) > 0 {
		notes = append(notes, fmt.Sprintf("Not returned (too many or too large): %s.", strings.Join(r.FilesSkipped, ", ")))
	}
	m.Note = strings.Join(notes, " ")
	b, _ := json.Marshal(m)
	return string(b)
}

// limitNote tells the model which limit stopped the code, and what to do.
func limitNote(hit string, c sandbox.Config) string {
	switch hit {
	case sandbox.LimitWall:
		return fmt.Sprintf("Stopped: the code ran longer than %s. Do less work, or make it faster.", c.WallTime)
	case sandbox.LimitCPU:
		return fmt.Sprintf("Stopped: the code used more than %s of CPU time. Do less work, or make it faster.", c.CPUTime)
	case sandbox.LimitMemory:
		return fmt.Sprintf("Stopped: the code needed more than %s of memory. Use less data at once.", humanize.IBytes(uint64(c.Memory)))
	case sandbox.LimitProcesses:
		return fmt.Sprintf("Stopped: the code started more than %d processes or threads.", c.Processes)
	case sandbox.LimitFileSize:
		return fmt.Sprintf("Stopped: a file grew past %s.", humanize.IBytes(uint64(c.FileBytes)))
	case sandbox.LimitWorkDir:
		return fmt.Sprintf("Stopped: the work folder is full (%s).", humanize.IBytes(uint64(c.WorkBytes)))
	case sandbox.LimitOutput:
		return fmt.Sprintf("The output was longer than %s; the middle was left out. Print less.", humanize.IBytes(uint64(c.OutputBytes)))
	}
	return ""
}

// codeSummary is the tool result's line for people.
func codeSummary(r *sandbox.Result, out CodeResult) string {
	var s string
	switch {
	case r.LimitHit != "" && r.LimitHit != sandbox.LimitOutput:
		s = "Stopped at the " + r.LimitHit + " limit"
	case r.ExitCode != 0:
		s = fmt.Sprintf("Failed (exit status %d)", r.ExitCode)
	default:
		s = "Ran"
	}
	s += fmt.Sprintf(" in %.1f s", r.Duration.Seconds())
	switch n := len(out.Charts); n {
	case 0:
	case 1:
		s += ", 1 chart"
	default:
		s += fmt.Sprintf(", %d charts", n)
	}
	return s
}

// clipMiddle keeps the first and the last n/2 characters of s: a long
// output's head, a traceback's end.
func clipMiddle(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n/2]) + fmt.Sprintf("\n[… %d characters left out …]\n", len(r)-n) + string(r[len(r)-n/2:])
}

func newCodeID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "code_" + hex.EncodeToString(b)
}

// CodeFiles keeps the files one run's code cells wrote (charts as PNG),
// by id ("code_…/chart_1.png"), for people to see. They are held in
// memory for the run only, up to a size: the store's run files are text
// (run_files.content is TEXT), and charts are not text.
type CodeFiles struct {
	mu    sync.Mutex
	max   int64
	size  int64
	files map[string]sandbox.File
	order []string
}

// DefaultCodeFilesBytes bounds what a run's CodeFiles hold.
const DefaultCodeFilesBytes = 64 << 20

// NewCodeFiles returns an empty keeper of up to maxBytes of files
// (DefaultCodeFilesBytes when not positive).
func NewCodeFiles(maxBytes int64) *CodeFiles {
	if maxBytes <= 0 {
		maxBytes = DefaultCodeFilesBytes
	}
	return &CodeFiles{max: maxBytes, files: map[string]sandbox.File{}}
}

// add keeps a file unless that would pass the limit.
func (f *CodeFiles) add(id string, file sandbox.File) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.size+file.Size > f.max {
		return false
	}
	if _, dup := f.files[id]; !dup {
		f.order = append(f.order, id)
	}
	f.files[id] = file
	f.size += file.Size
	return true
}

// Get returns a kept file by its id.
func (f *CodeFiles) Get(id string) (sandbox.File, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	file, ok := f.files[id]
	return file, ok
}

// IDs lists the kept files' ids in the order they were written.
func (f *CodeFiles) IDs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.order...)
}

// CodeSettings are the settings that enable code_interpreter, the first
// where it was turned off.
var CodeSettings = []string{"SOVA_SANDBOX_ENABLED", "SOVA_SANDBOX_BWRAP", "SOVA_SANDBOX_PYTHON"}

// CodeStatus is code_interpreter's availability (GET /api/providers, a
// group's withdrawn tools) given what starting the sandbox gave: sb, or
// err saying why there is none (sandbox.ErrUnavailable, or turned off).
func CodeStatus(sb *sandbox.Sandbox, err error) Status {
	st := Status{Name: CodeInterpreterName, Available: sb != nil && err == nil, Settings: CodeSettings}
	if st.Available {
		st.Provider = "python sandbox (" + sb.Version() + ")"
		return st
	}
	st.Reason = "the code sandbox cannot run on this server"
	var u *sandbox.UnavailableError
	switch {
	case errors.As(err, &u):
		st.Reason += ": " + u.Reason
	case err != nil:
		st.Reason += ": " + err.Error()
	}
	return st
}

// Withdraw says on sink that a tool is not offered in this run and why, as
// the search groups do: a "tools" status, "NAME is not available: REASON",
// with the settings that would enable it as its detail.
func Withdraw(sink event.Sink, st Status) {
	if sink == nil {
		return
	}
	sink.Emit(event.Event{Type: event.TypeStatus, Time: time.Now(), Status: &event.Status{
		Stage: "tools", Message: st.Name + " is not available: " + st.Reason, Detail: strings.Join(st.Settings, ", "),
	}})
}

// CodeTools are the code tools of a run: code_interpreter on sb, or, when
// there is no sandbox (err says why: sandbox.New's ErrUnavailable, or
// turned off), none — the status on sink says so (Withdraw), and code is
// never run outside the sandbox.
func CodeTools(sb *sandbox.Sandbox, err error, sink event.Sink, o CodeOptions) []agent.Tool {
	st := CodeStatus(sb, err)
	if o.Name != "" {
		st.Name = o.Name
	}
	if !st.Available {
		Withdraw(sink, st)
		return nil
	}
	return []agent.Tool{CodeInterpreter(sb, o)}
}
