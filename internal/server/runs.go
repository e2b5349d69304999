package server

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/report"
	"github.com/sova-ai/sova/internal/run"
)

// runView is GET /api/runs/{id}: the run, its workspace files, and its
// latest progress — the last data part of each kind and id (the research
// plan, each agent with its todos, supervisor decisions) and the last stage.
type runView struct {
	Run      *sova.Run      `json:"run"`
	Files    []sova.RunFile `json:"files"`
	Stage    *event.Status  `json:"stage,omitempty"`
	Progress []progressItem `json:"progress"`
	Sources  []sova.Source  `json:"sources"`
}

type progressItem struct {
	Name  string          `json:"name"`
	ID    string          `json:"id,omitempty"`
	Value json.RawMessage `json:"value"`
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	rn, err := s.opt.Store.GetRun(ctx, userID(r), r.PathValue("id"))
	if err != nil {
		s.runStoreError(w, r, err)
		return
	}
	files, err := s.opt.Store.RunFiles(ctx, rn.ID)
	if err != nil {
		s.runStoreError(w, r, err)
		return
	}
	v := runView{Run: rn, Files: files, Progress: []progressItem{}, Sources: []sova.Source{}}
	index := map[string]int{}
	err = s.opt.Service.Follow(ctx, rn.ID, 0, func(e event.Event) error {
		switch e.Type {
		case event.TypeStatus:
			v.Stage = e.Status
		case event.TypeData:
			key := e.Data.Name + "\x00" + e.Data.ID
			item := progressItem{Name: e.Data.Name, ID: e.Data.ID, Value: e.Data.Value}
			if i, ok := index[key]; ok && e.Data.ID != "" {
				v.Progress[i] = item
			} else {
				index[key] = len(v.Progress)
				v.Progress = append(v.Progress, item)
			}
		case event.TypeFinish:
			v.Sources = append(v.Sources, e.Finish.Sources...)
		}
		return nil
	}, run.Snapshot())
	if err != nil {
		s.runStoreError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) runStream(w http.ResponseWriter, r *http.Request) {
	seen, ok := lastEventID(r)
	if !ok {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_last_event_id", "Last-Event-ID must be a non-negative number")
		return
	}
	rn, err := s.opt.Store.GetRun(r.Context(), userID(r), r.PathValue("id"))
	if err != nil {
		s.runStoreError(w, r, err)
		return
	}
	s.streamUI(w, r, rn.ID, 0, seen)
}

func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request) {
	ctx, user, id := r.Context(), userID(r), r.PathValue("id")
	before, _ := s.opt.Store.GetRun(ctx, user, id)
	if err := s.opt.Service.Cancel(ctx, id); err != nil {
		s.runStoreError(w, r, err)
		return
	}
	if before != nil && before.State == sova.RunWaiting {
		s.closeWaitingAgent(ctx, user, id) // agents.go
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"runId": id, "status": "cancelling"})
}

func (s *Server) restartRun(w http.ResponseWriter, r *http.Request) {
	p, err := s.opt.Service.Restart(r.Context(), r.PathValue("id"))
	if err != nil {
		s.runStoreError(w, r, err)
		return
	}
	out := map[string]string{"runId": p.RunID, "streamUrl": "/api/runs/" + p.RunID + "/stream"}
	if p.ChatID != "" {
		out["chatId"] = p.ChatID
	}
	writeJSON(w, http.StatusAccepted, out)
}

func (s *Server) listRunFiles(w http.ResponseWriter, r *http.Request) {
	rn, err := s.opt.Store.GetRun(r.Context(), userID(r), r.PathValue("id"))
	if err != nil {
		s.runStoreError(w, r, err)
		return
	}
	files, err := s.opt.Store.RunFiles(r.Context(), rn.ID)
	if err != nil {
		s.runStoreError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"files": files})
}

func (s *Server) getRunFile(w http.ResponseWriter, r *http.Request) {
	rn, err := s.opt.Store.GetRun(r.Context(), userID(r), r.PathValue("id"))
	if err != nil {
		s.runStoreError(w, r, err)
		return
	}
	data, ctype, err := s.opt.Store.RunFileBytes(r.Context(), rn.ID, r.PathValue("path"))
	if err != nil {
		s.runStoreError(w, r, err)
		return
	}
	ctype, inline := servedType(ctype)
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "private, no-cache")
	if !inline {
		h.Set("Content-Disposition", "attachment")
	}
	if !strings.HasPrefix(ctype, "image/") && ctype != "application/pdf" {
		// Whatever a file holds, it runs nothing in this origin.
		h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	}
	_, _ = w.Write(data)
}

// servedType is the Content-Type a run file is served with, and whether
// it is shown in the browser: text, the raster images charts are, and
// PDFs are; anything else (a type a mode did not choose to show) is
// offered as a download of bytes, never as markup of this origin.
func servedType(stored string) (string, bool) {
	mt, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(stored)), ";")
	switch mt = strings.TrimSpace(mt); mt {
	case "image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf":
		return mt, true
	case "text/markdown", "text/plain", "text/csv", "application/json":
		return mt + "; charset=utf-8", true
	}
	return "application/octet-stream", false
}

// exportRunFiles answers the workspace as a zip archive: the session
// folder as the run left it.
func (s *Server) exportRunFiles(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	rn, err := s.opt.Store.GetRun(ctx, userID(r), r.PathValue("id"))
	if err != nil {
		s.runStoreError(w, r, err)
		return
	}
	files, err := s.opt.Store.RunFiles(ctx, rn.ID)
	if err != nil {
		s.runStoreError(w, r, err)
		return
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="run-%s.zip"`, rn.ID))
	zw := zip.NewWriter(w)
	for _, f := range files {
		content, err := s.opt.Store.RunFile(ctx, rn.ID, f.Path)
		if err != nil {
			s.opt.Logger.Error("exporting workspace failed", "run", rn.ID, "file", f.Path, "err", err)
			return
		}
		fw, err := zw.CreateHeader(&zip.FileHeader{Name: "run-" + rn.ID + "/" + f.Path, Method: zip.Deflate, Modified: f.UpdatedAt})
		if err != nil {
			return
		}
		if _, err := fw.Write([]byte(content)); err != nil {
			return
		}
	}
	_ = zw.Close()
}

func (s *Server) runReportMarkdown(w http.ResponseWriter, r *http.Request) {
	rn, ok := s.finishedReport(w, r)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.md"`, reportFileName(rn)))
	_, _ = w.Write([]byte(rn.Report))
}

// finishedReport returns the run when its report can be offered: only
// after the run completed.
func (s *Server) finishedReport(w http.ResponseWriter, r *http.Request) (*sova.Run, bool) {
	rn, err := s.opt.Store.GetRun(r.Context(), userID(r), r.PathValue("id"))
	if err != nil {
		s.runStoreError(w, r, err)
		return nil, false
	}
	if rn.State != sova.RunCompleted || rn.Report == "" {
		writeError(w, http.StatusConflict, "invalid_request_error", "report_not_ready",
			"this run has no report yet (state: "+rn.State+"); reports are offered when a research run completes")
		return nil, false
	}
	return rn, true
}

// reportFileName makes a safe file name from the run's question.
func reportFileName(rn *sova.Run) string { return safeFileName("sova-report-", rn.Question, rn.ID) }

// safeFileName is prefix and the first 60 or so letters and digits (Latin
// or Cyrillic) of text, other characters dropped and spaces made dashes;
// prefix and id when text has none.
func safeFileName(prefix, text, id string) string {
	var b strings.Builder
	for _, r := range text {
		switch {
		case r == ' ' || r == '-' || r == '_':
			b.WriteRune('-')
		case r >= '0' && r <= '9', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= 'а' && r <= 'я', r >= 'А' && r <= 'Я':
			b.WriteRune(r)
		}
		if b.Len() > 60 {
			break
		}
	}
	if name := strings.Trim(b.String(), "-"); name != "" {
		return prefix + name
	}
	return prefix + id
}

func (s *Server) runStoreError(w http.ResponseWriter, r *http.Request, err error) {
	if rateLimited(w, r, err) { // limits.go
		return
	}
	switch {
	case errors.Is(err, sova.ErrNotFound):
		writeError(w, http.StatusNotFound, "not_found", "run_not_found", "no such run or file")
	case errors.Is(err, run.ErrNotRestartable), errors.Is(err, run.ErrNotRunning):
		s.refuse(w, r, http.StatusConflict, "invalid_request_error", "run_state", err, "the run is not in a state that allows this")
	case errors.Is(err, run.ErrUnknownMode):
		s.refuse(w, r, http.StatusConflict, "invalid_request_error", "unknown_mode", err, "the run's mode is not served here")
	case errors.Is(err, run.ErrRunInProgress):
		writeError(w, http.StatusConflict, "invalid_request_error", "run_in_progress",
			"another run of this chat is in progress; wait for it to end or cancel it, then restart this one")
	default:
		s.failure(w, r, err, "the run request")
	}
}

// runReportPDF renders the completed report as PDF (Cyrillic included).
func (s *Server) runReportPDF(w http.ResponseWriter, r *http.Request) {
	rn, ok := s.finishedReport(w, r)
	if !ok {
		return
	}
	var buf bytes.Buffer
	if err := report.PDF(&buf, rn.Report, report.Options{Date: rn.UpdatedAt, Images: s.runImages(r.Context(), rn.ID)}); err != nil {
		if errors.Is(err, report.ErrTooLarge) {
			writeError(w, http.StatusUnprocessableEntity, "invalid_request_error", "report_too_large",
				"the report is too large to render as PDF; the Markdown report is at report.md")
			return
		}
		s.opt.Logger.Error("rendering report PDF failed", "run", rn.ID, "err", err)
		writeError(w, http.StatusInternalServerError, "server_error", "pdf", "could not render the PDF; the Markdown report is at report.md")
		return
	}
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.pdf"`, reportFileName(rn)))
	_, _ = w.Write(buf.Bytes())
}

// runImages gives the report's PDF the run's own PNG files (an extreme
// run's charts), referenced as the run-files endpoint serves them
// (/api/runs/{id}/files/charts/…) or by their path in the run: the
// report embeds them. Nothing of another run, nor any other address.
func (s *Server) runImages(ctx context.Context, runID string) report.ImageSource {
	prefix := "/api/runs/" + runID + "/files/"
	return func(dest string) ([]byte, bool) {
		p, ok := strings.CutPrefix(dest, prefix)
		if !ok {
			if strings.Contains(dest, ":") || strings.HasPrefix(dest, "/") {
				return nil, false
			}
			p = dest
		}
		p, err := url.PathUnescape(p)
		if err != nil {
			return nil, false
		}
		data, ctype, err := s.opt.Store.RunFileBytes(ctx, runID, p)
		if err != nil || ctype != "image/png" {
			return nil, false
		}
		return data, true
	}
}
