package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/sova-ai/sova/web"
)

// contentSecurityPolicy confines the UI to its own scripts: no inline or
// remote script, no eval, no string-to-HTML sinks (Trusted Types), API
// calls to this origin only. Images come from this origin only: remote
// ones (favicons, thumbnails) through the image proxy (GET /api/image);
// media from this origin or recorded in the page (voice).
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' data:; connect-src 'self'; font-src 'self'; media-src 'self' blob:; object-src 'none'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'; " +
	"require-trusted-types-for 'script'; trusted-types 'none'"

// uiHandler serves the embedded browser UI and answers everything else
// that no API route matched with the JSON 404 API clients expect.
type uiHandler struct {
	files fs.FS
	// etags holds a content hash per file, computed once: the embedded
	// files carry no modification time, and without a validator every
	// reload would transfer every module again.
	etags map[string]string
}

func newUIHandler(files fs.FS) *uiHandler {
	h := &uiHandler{files: files, etags: map[string]string{}}
	_ = fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil // an unreadable entry is served without an ETag
		}
		b, err := fs.ReadFile(files, p)
		if err != nil {
			return nil
		}
		sum := sha256.Sum256(b)
		h.etags[p] = `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`
		return nil
	})
	return h
}

// ui returns the handler for the catch-all route: the UI's page at / and
// /c/{chatId}, its files under /assets/, a JSON 404 for anything else.
func (s *Server) ui() http.Handler { return newUIHandler(web.Files()) }

func (h *uiHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if isAPIPath(p) {
		notFound(w, r)
		return
	}
	var file string
	switch {
	case p == "/" || strings.HasPrefix(p, "/c/"):
		// /c/{chatId} is a deep link to a chat; the page's script reads it.
		file = "index.html"
	case strings.HasPrefix(p, "/s/"):
		// /s/{secret}: a shared chat, read-only (share.go).
		file = "share.html"
	case strings.HasPrefix(p, "/assets/"):
		file = strings.TrimPrefix(path.Clean(p), "/")
	default:
		notFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "method_not_allowed",
			"method "+r.Method+" is not allowed on "+p+"; the UI answers GET and HEAD")
		return
	}
	// The files are embedded: failing to read one means there is no such
	// file (or it is a directory), never a transient fault.
	b, err := fs.ReadFile(h.files, file)
	if err != nil {
		notFound(w, r)
		return
	}
	hd := w.Header()
	setUIHeaders(hd)
	// Files are not fingerprinted, so the browser revalidates each time;
	// the ETag turns that into a 304 without a body.
	hd.Set("Cache-Control", "no-cache")
	if tag, ok := h.etags[file]; ok {
		hd.Set("ETag", tag)
	}
	if ct := contentType(file); ct != "" {
		hd.Set("Content-Type", ct)
	}
	http.ServeContent(w, r, file, time.Time{}, bytes.NewReader(b))
}

// setUIHeaders sets the security headers of every UI response.
func setUIHeaders(hd http.Header) {
	hd.Set("Content-Security-Policy", contentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	// Favicons load from the cited sites; no-referrer keeps the address
	// of this server and of the chat out of their logs.
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
}

// contentType names the types of the UI's files explicitly, so that a
// system mime table cannot change them (module scripts need a JavaScript
// type under nosniff).
func contentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	case ".json", ".webmanifest":
		return "application/json"
	}
	return ""
}

func isAPIPath(p string) bool {
	return p == "/api" || strings.HasPrefix(p, "/api/") || p == "/v1" || strings.HasPrefix(p, "/v1/")
}

func notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusNotFound, "not_found", "not_found", "no such endpoint: "+r.Method+" "+r.URL.Path)
}
