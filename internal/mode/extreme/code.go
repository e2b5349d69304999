package extreme

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/tools"
)

// codeRunnerTool is codeRunner (seed 000 §2.4): code_interpreter's cell in
// the sandbox under the seed's name, each cell shown as a code part from
// running to completed with its output and charts. The charts become run
// files; the model reads their names and sizes.
func (s *session) codeRunnerTool() agent.Tool {
	inner := tools.CodeInterpreter(s.cfg.Providers.Sandbox, tools.CodeOptions{Name: CodeRunnerName, Files: s.files})
	run := inner.(agent.Runner)
	return agent.NewTool(CodeRunnerName, inner.Description(), func(ctx context.Context, a tools.CodeArgs) (agent.Output, error) {
		return s.runCode(ctx, run, a)
	}, agent.WithTitle(func(a tools.CodeArgs) string { return "Running code: " + mode.Clip(a.Title, 80) }))
}

func (s *session) runCode(ctx context.Context, run agent.Runner, a tools.CodeArgs) (agent.Output, error) {
	part := CodePart{Kind: KindCode, CodeID: partID(ctx, "code_"), Title: strings.TrimSpace(a.Title), Code: a.Code, Status: CodeRunning}
	if part.Title == "" {
		part.Title = "Code"
	}
	id := "code-" + part.CodeID
	s.parts.emit(id, part)
	args, err := json.Marshal(a)
	if err != nil {
		return agent.Output{}, err
	}
	out, err := run.Run(ctx, args)
	if err != nil {
		if ctx.Err() != nil {
			return agent.Output{}, ctx.Err()
		}
		part.Status, part.Error = CodeError, err.Error()
		s.parts.emit(id, part)
		return agent.Output{}, err
	}
	var res tools.CodeResult
	if len(out.Data) == 0 || json.Unmarshal(out.Data, &res) != nil {
		// An argument the tool refused (no code): the model reads why.
		part.Status, part.Error = CodeError, out.Text
		s.parts.emit(id, part)
		return out, nil
	}
	part.Status, part.LimitHit = res.Status, res.LimitHit
	part.Result = &CodeOutput{Stdout: res.Result.Stdout, Stderr: res.Result.Stderr, ExitCode: res.Result.ExitCode}
	part.Charts = s.keepCharts(ctx, part.CodeID, part.Title, res.Charts)
	s.parts.emit(id, part)

	c := cell{title: part.Title, stdout: res.Result.Stdout, stderr: res.Result.Stderr, exit: res.Result.ExitCode, charts: part.Charts}
	s.mu.Lock()
	s.cells = append(s.cells, c)
	s.mu.Unlock()
	// The tool-result's data is the part: what the stream shows, without
	// the keeper's ids.
	if data, err := json.Marshal(part); err == nil {
		out.Data = data
	}
	return out, nil
}

// keepCharts stores the PNG charts of a cell as run files
// (charts/<codeId>/<name>) and returns them as the stream shows them. A
// chart is kept only when its bytes are a PNG, whatever its name says,
// since it is served as one; without a run workspace the charts are
// listed but not kept.
func (s *session) keepCharts(ctx context.Context, codeID, title string, charts []tools.CodeChart) []Chart {
	out := []Chart{}
	pngs := 0
	for _, c := range charts {
		if f, ok := s.files.Get(c.File); ok && http.DetectContentType(f.Data) == "image/png" {
			pngs++
		}
	}
	n := 0
	for _, c := range charts {
		ch := Chart{Type: "chart", Format: c.Format, Name: c.Name, Size: c.Size, Title: title}
		f, ok := s.files.Get(c.File)
		ok = ok && http.DetectContentType(f.Data) == "image/png"
		if ok && pngs > 1 {
			n++
			ch.Title = fmt.Sprintf("%s (%d)", title, n)
		}
		if ok && s.ws != nil {
			p := "charts/" + codeID + "/" + c.Name
			if err := s.ws.WriteBytes(ctx, p, "image/png", f.Data); err != nil {
				mode.Status(s.sink, "code", "A chart could not be kept", err.Error())
			} else {
				ch.Path, ch.URL = p, fileURL(s.in.RunID, p)
				s.mu.Lock()
				s.charts[ch.URL] = f.Data
				s.mu.Unlock()
			}
		}
		out = append(out, ch)
	}
	return out
}

// fileURL is where the run-files endpoint serves a run's file.
func fileURL(runID, p string) string {
	segs := strings.Split(path.Clean(p), "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "/api/runs/" + url.PathEscape(runID) + "/files/" + strings.Join(segs, "/")
}
