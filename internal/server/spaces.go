package server

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/errtext"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/spaces"
)

// Document space endpoints:
//
//	GET    /api/spaces                              list
//	POST   /api/spaces                              create {name, description}
//	GET    /api/spaces/{id}                         one space
//	PATCH  /api/spaces/{id}                         rename {name, description}
//	DELETE /api/spaces/{id}                         delete with its documents
//	GET    /api/spaces/{id}/documents               list documents
//	POST   /api/spaces/{id}/documents               upload (multipart, one or more files)
//	GET    /api/spaces/{id}/documents/{docId}       one document
//	DELETE /api/spaces/{id}/documents/{docId}       delete a document
//	GET    /api/spaces/{id}/search?q=&limit=        search passages
//
// {id} is a space's ID or its name.
func (s *Server) spaceRoutes() {
	s.handle("GET /api/spaces", s.listSpaces)
	s.handle("POST /api/spaces", s.createSpace)
	s.handle("GET /api/spaces/{id}", s.getSpace)
	s.handle("PATCH /api/spaces/{id}", s.updateSpace)
	s.handle("DELETE /api/spaces/{id}", s.deleteSpace)
	s.handle("GET /api/spaces/{id}/documents", s.listDocuments)
	s.handle("POST /api/spaces/{id}/documents", s.uploadDocuments)
	s.handle("GET /api/spaces/{id}/documents/{docId}", s.getDocument)
	s.handle("DELETE /api/spaces/{id}/documents/{docId}", s.deleteDocument)
	s.handle("GET /api/spaces/{id}/search", s.searchSpace)
}

// spacesOr404 answers 404 when the server has no spaces service.
func (s *Server) spacesOr404(w http.ResponseWriter) bool {
	if s.opt.Spaces == nil {
		writeError(w, http.StatusNotFound, "not_found", "not_found", "document spaces are not enabled on this server")
		return false
	}
	return true
}

// spaceOf resolves the {id} of the path, answering the error itself.
func (s *Server) spaceOf(w http.ResponseWriter, r *http.Request) (*sova.Space, bool) {
	if !s.spacesOr404(w) {
		return nil, false
	}
	sp, err := s.opt.Spaces.Space(r.Context(), userID(r), r.PathValue("id"))
	if err != nil {
		s.spaceError(w, r, err)
		return nil, false
	}
	return sp, true
}

func (s *Server) spaceError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, sova.ErrNotFound):
		writeError(w, http.StatusNotFound, "not_found", "space_not_found", "no such document space")
	case errors.Is(err, sova.ErrConflict):
		// The store's error names the table and the constraint; the person
		// needs only to know the name is taken.
		s.opt.Logger.Debug("space conflict", "err", err)
		writeError(w, http.StatusConflict, "invalid_request_error", "space_exists", conflictMessage(err))
	case errors.Is(err, sova.ErrInvalid):
		s.refuse(w, r, http.StatusBadRequest, "invalid_request_error", "invalid_space", err, "the space or document is invalid")
	case errors.Is(err, spaces.ErrEmptyQuery):
		writeError(w, http.StatusBadRequest, "invalid_request_error", "empty_query", spaces.ErrEmptyQuery.Error())
	case errors.Is(err, spaces.ErrUploadsBusy):
		w.Header().Set("Retry-After", "10")
		writeError(w, http.StatusTooManyRequests, "rate_limit_error", "uploads_busy", spaces.ErrUploadsBusy.Error()+"; try again shortly")
	case errors.Is(err, spaces.ErrIndexBusy):
		s.opt.Logger.Warn("document spaces: the index is busy", "err", errtext.Detail(err))
		writeError(w, http.StatusServiceUnavailable, "server_error", "index_busy", "the document index is in use; try again shortly")
	default:
		s.failure(w, r, err, "document spaces")
	}
}

// conflictMessage says what a conflict over a space means without the
// store's text: a name already taken, or a document changed meanwhile (the
// spaces package's own words, kept).
func conflictMessage(err error) string {
	msg := err.Error()
	if strings.Contains(msg, "changed while it was being added") || strings.Contains(msg, "given twice") {
		if i := strings.Index(msg, "store:"); i >= 0 {
			msg = strings.TrimSpace(msg[:i])
		}
		if msg = errtext.ForPerson(errors.New(msg), sova.ErrConflict); msg != "" {
			return msg
		}
	}
	return "a space with this name already exists; choose another name"
}

func (s *Server) listSpaces(w http.ResponseWriter, r *http.Request) {
	if !s.spacesOr404(w) {
		return
	}
	list, err := s.opt.Spaces.Spaces(r.Context(), userID(r))
	if err != nil {
		s.spaceError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"spaces": list})
}

type spaceBody struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
}

func (s *Server) createSpace(w http.ResponseWriter, r *http.Request) {
	if !s.spacesOr404(w) {
		return
	}
	var body spaceBody
	if !s.decode(w, r, &body) {
		return
	}
	if body.Name == nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_space", `"name" is required`)
		return
	}
	desc := ""
	if body.Description != nil {
		desc = *body.Description
	}
	sp, err := s.opt.Spaces.CreateSpace(r.Context(), userID(r), *body.Name, desc)
	if err != nil {
		s.spaceError(w, r, err)
		return
	}
	w.Header().Set("Location", "/api/spaces/"+sp.ID)
	writeJSON(w, http.StatusCreated, sp)
}

func (s *Server) getSpace(w http.ResponseWriter, r *http.Request) {
	sp, ok := s.spaceOf(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, sp)
}

func (s *Server) updateSpace(w http.ResponseWriter, r *http.Request) {
	sp, ok := s.spaceOf(w, r)
	if !ok {
		return
	}
	var body spaceBody
	if !s.decode(w, r, &body) {
		return
	}
	name, desc := sp.Name, sp.Description
	if body.Name != nil {
		name = *body.Name
	}
	if body.Description != nil {
		desc = *body.Description
	}
	if err := s.opt.Spaces.UpdateSpace(r.Context(), userID(r), sp.ID, name, desc); err != nil {
		s.spaceError(w, r, err)
		return
	}
	sp, err := s.opt.Spaces.Space(r.Context(), userID(r), sp.ID)
	if err != nil {
		s.spaceError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sp)
}

func (s *Server) deleteSpace(w http.ResponseWriter, r *http.Request) {
	sp, ok := s.spaceOf(w, r)
	if !ok {
		return
	}
	if err := s.opt.Spaces.DeleteSpace(r.Context(), userID(r), sp.ID); err != nil {
		s.spaceError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) listDocuments(w http.ResponseWriter, r *http.Request) {
	sp, ok := s.spaceOf(w, r)
	if !ok {
		return
	}
	docs, err := s.opt.Spaces.Documents(r.Context(), userID(r), sp.ID)
	if err != nil {
		s.spaceError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"space": sp, "documents": docs})
}

func (s *Server) getDocument(w http.ResponseWriter, r *http.Request) {
	sp, ok := s.spaceOf(w, r)
	if !ok {
		return
	}
	d, err := s.opt.Store.GetDocument(r.Context(), userID(r), sp.ID, r.PathValue("docId"))
	if err != nil {
		if errors.Is(err, sova.ErrNotFound) {
			writeError(w, http.StatusNotFound, "not_found", "document_not_found", "no such document in this space")
			return
		}
		s.spaceError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (s *Server) deleteDocument(w http.ResponseWriter, r *http.Request) {
	sp, ok := s.spaceOf(w, r)
	if !ok {
		return
	}
	err := s.opt.Spaces.DeleteDocuments(r.Context(), userID(r), sp.ID, []string{r.PathValue("docId")})
	if err != nil {
		if errors.Is(err, sova.ErrNotFound) {
			writeError(w, http.StatusNotFound, "not_found", "document_not_found", "no such document in this space")
			return
		}
		s.spaceError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// uploadDocuments reads a multipart body: every part with a file name is
// a document. The whole body is bounded by SOVA_SPACES_MAX_UPLOAD_BYTES,
// each file by SOVA_SPACES_MAX_FILE_BYTES. The answer lists what became
// of each file: 201 when something was added or replaced, 200 when all
// were unchanged; when every file failed, the error of the first.
func (s *Server) uploadDocuments(w http.ResponseWriter, r *http.Request) {
	sp, ok := s.spaceOf(w, r)
	if !ok {
		return
	}
	limit := s.opt.MaxUploadBytes
	if limit <= 0 {
		limit = 100 << 20
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	mr, err := r.MultipartReader()
	if err != nil {
		// Go's words ("request Content-Type isn't multipart/form-data")
		// are not the person's.
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_upload",
			"upload documents as multipart/form-data with one or more file parts")
		return
	}
	// Each file is spooled to a temporary file rather than held in
	// memory: the service reads it once, at its exact size, when its turn
	// comes (a body of several large files is never all in memory).
	var files []spaces.File
	var spooled []string
	defer func() {
		for _, p := range spooled {
			_ = os.Remove(p)
		}
	}()
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			s.uploadReadError(w, r, err, limit)
			return
		}
		name := partFileName(part)
		if name == "" {
			_ = part.Close()
			continue // an ordinary form field
		}
		// Read up to the file limit and one byte more, so that the service
		// reports a file over the limit as such.
		path, err := spool(io.LimitReader(part, s.opt.MaxFileBytes+1))
		_ = part.Close()
		if path != "" {
			spooled = append(spooled, path)
		}
		if err != nil {
			if errors.Is(err, errSpool) {
				s.failure(w, r, err, "keeping the upload for reading")
				return
			}
			s.uploadReadError(w, r, err, limit)
			return
		}
		files = append(files, spaces.File{Name: name, Open: func() (io.ReadCloser, error) { return os.Open(path) }})
	}
	if len(files) == 0 {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "no_files", "the upload holds no file parts (send each file as a part with a filename)")
		return
	}
	results, err := s.opt.Spaces.Add(r.Context(), userID(r), sp.ID, files, spaces.AddOptions{})
	if err != nil {
		s.spaceError(w, r, err)
		return
	}
	status, changed, failed := http.StatusOK, false, 0
	for i, res := range results {
		if res.Status == spaces.StatusFailed {
			// A file the person sent that cannot be read is theirs to
			// hear about; a failure of the store or the index is not.
			if msg := errtext.ForPerson(res.Err(), sova.ErrInvalid, sova.ErrConflict); msg != "" {
				results[i].Error = msg
			} else {
				id := errtext.NewID()
				s.opt.Logger.Error("adding a document failed", "error_id", id, "file", res.Name, "err", errtext.Detail(res.Err()))
				results[i].Error = "the document could not be added (error id " + id + ")"
			}
		}
		switch res.Status {
		case spaces.StatusAdded, spaces.StatusReplaced:
			changed = true
		case spaces.StatusFailed:
			failed++
		}
	}
	if changed {
		status = http.StatusCreated
	}
	if failed == len(results) {
		if cancelled(r.Context(), results[0].Err()) {
			w.WriteHeader(StatusClientClosedRequest)
			return
		}
		first := results[0]
		code, httpStatus := "unreadable_document", http.StatusUnprocessableEntity
		switch {
		case errors.Is(first.Err(), spaces.ErrUnsupportedFormat):
			code, httpStatus = "unsupported_format", http.StatusUnsupportedMediaType
		case errors.Is(first.Err(), spaces.ErrTooLarge):
			code, httpStatus = "file_too_large", http.StatusRequestEntityTooLarge
		}
		msg := first.Error
		if len(results) > 1 {
			msg = fmt.Sprintf("none of the %d files could be added; %s: %s", len(results), first.Name, first.Error)
		}
		writeError(w, httpStatus, "invalid_request_error", code, msg)
		return
	}
	writeJSON(w, status, map[string]any{"documents": results})
}

// errSpool is a failure of the server's own temporary file, not of the
// request's body.
var errSpool = errors.New("temporary file")

// spool copies r to a new temporary file and returns its path (also on
// an error after the file was made, for the caller to remove).
func spool(r io.Reader) (string, error) {
	f, err := os.CreateTemp("", "sova-upload-*")
	if err != nil {
		return "", fmt.Errorf("%w: %w", errSpool, err)
	}
	path := f.Name()
	_, err = io.Copy(writerOnly{f}, r)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("%w: %w", errSpool, cerr)
	}
	return path, err
}

// writerOnly hides *os.File's ReadFrom, so that a failure to read the
// request's body and a failure to write the file stay apart.
type writerOnly struct{ f *os.File }

func (w writerOnly) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err != nil {
		err = fmt.Errorf("%w: %w", errSpool, err)
	}
	return n, err
}

func (s *Server) uploadReadError(w http.ResponseWriter, r *http.Request, err error, limit int64) {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		writeError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "body_too_large",
			"the upload is larger than the limit of "+strconv.FormatInt(limit, 10)+" bytes (SOVA_SPACES_MAX_UPLOAD_BYTES)")
		return
	}
	if cancelled(r.Context(), err) {
		w.WriteHeader(StatusClientClosedRequest)
		return
	}
	s.opt.Logger.Debug("reading an upload failed", "err", err)
	writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_upload",
		"the upload could not be read: send the documents as multipart/form-data, each file a part with a filename")
}

// partFileName is a part's file name without any directories a browser
// may have sent, or "" for a part that is not a file.
func partFileName(p interface{ FileName() string }) string {
	name := strings.ReplaceAll(p.FileName(), `\`, "/")
	if name == "" {
		return ""
	}
	name = path.Base(name)
	if name == "." || name == "/" {
		return ""
	}
	if dec, err := new(mime.WordDecoder).DecodeHeader(name); err == nil {
		name = dec
	}
	return name
}

// hitJSON is a search hit as the API returns it.
type hitJSON struct {
	spaces.Hit
	Position string `json:"position"`
}

func (s *Server) searchSpace(w http.ResponseWriter, r *http.Request) {
	sp, ok := s.spaceOf(w, r)
	if !ok {
		return
	}
	q := r.URL.Query().Get("q")
	limit := spaces.DefaultSearchLimit
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_limit", "limit must be a number from 1 to 100")
			return
		}
		limit = n
	}
	hits, err := s.opt.Spaces.Search(r.Context(), userID(r), []string{sp.ID}, q, limit)
	if err != nil {
		s.spaceError(w, r, err)
		return
	}
	out := make([]hitJSON, len(hits))
	for i, h := range hits {
		out[i] = hitJSON{Hit: h, Position: h.Position()}
	}
	writeJSON(w, http.StatusOK, map[string]any{"query": q, "space": sp.ID, "hits": out})
}

// resolveSpaces turns the spaces a search request names (IDs or names)
// into IDs, answering the error itself. Only modes that search documents
// take spaces.
func (s *Server) resolveSpaces(w http.ResponseWriter, r *http.Request, modeID string, refs []string) ([]string, bool) {
	if len(refs) == 0 {
		return nil, true
	}
	if m, ok := s.opt.Service.Modes().Get(modeID); ok {
		if da, ok := m.(mode.DocumentAware); !ok || !da.SearchesDocuments() {
			var able []string
			for _, m := range s.opt.Service.Modes().All() {
				if da, ok := m.(mode.DocumentAware); ok && da.SearchesDocuments() {
					able = append(able, m.ID())
				}
			}
			writeError(w, http.StatusBadRequest, "invalid_request_error", "spaces_unsupported",
				fmt.Sprintf("mode %q does not search document spaces; modes that do: %s", modeID, strings.Join(able, ", ")))
			return nil, false
		}
	}
	if s.opt.Spaces == nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "spaces_unsupported", "document spaces are not enabled on this server")
		return nil, false
	}
	ids := make([]string, 0, len(refs))
	seen := map[string]bool{}
	for _, ref := range refs {
		sp, err := s.opt.Spaces.Space(r.Context(), userID(r), ref)
		if errors.Is(err, sova.ErrNotFound) {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "unknown_space", fmt.Sprintf("no document space %q", ref))
			return nil, false
		}
		if err != nil {
			s.spaceError(w, r, err)
			return nil, false
		}
		if !seen[sp.ID] {
			seen[sp.ID] = true
			ids = append(ids, sp.ID)
		}
	}
	return ids, true
}
