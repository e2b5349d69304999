package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The catch-all route serves the UI at / and /c/{id} and its files under
// /assets/, with the security headers; every other unknown path, and every
// unknown /api/ or /v1/ path, stays the JSON 404 API clients expect.
func TestUIRoutes(t *testing.T) {
	e := newEnv(t, nil)
	tests := []struct {
		name, method, path string
		status             int
		contentType        string // prefix
		bodyHas            string
		ui                 bool // carries the UI's security headers
		errCode            string
	}{
		{"page", "GET", "/", 200, "text/html", `<script type="module" src="/assets/js/app.js"></script>`, true, ""},
		{"chat deep link", "GET", "/c/0b9e2f6c-1d1a-4d7e-9a55-3e1f0c2d9b11", 200, "text/html", `id="thread"`, true, ""},
		{"head of page", "HEAD", "/", 200, "text/html", "", true, ""},
		{"module", "GET", "/assets/js/app.js", 200, "text/javascript", "import", true, ""},
		{"style sheet", "GET", "/assets/app.css", 200, "text/css", "--accent", true, ""},
		{"icon", "GET", "/assets/sova.svg", 200, "image/svg+xml", "<svg", true, ""},
		{"missing asset", "GET", "/assets/js/nope.js", 404, "application/json", "", false, "not_found"},
		{"asset directory", "GET", "/assets/js/", 404, "application/json", "", false, "not_found"},
		{"unknown api path", "GET", "/api/nothing", 404, "application/json", "no such endpoint: GET /api/nothing", false, "not_found"},
		{"unknown api root", "GET", "/api", 404, "application/json", "", false, "not_found"},
		{"unknown v1 path", "POST", "/v1/embeddings", 404, "application/json", "", false, "not_found"},
		{"unknown page", "GET", "/wp-admin", 404, "application/json", "", false, "not_found"},
		{"post to page", "POST", "/", 405, "application/json", "", false, "method_not_allowed"},
		{"api still routed", "GET", "/healthz", 200, "application/json", `"status":"ok"`, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, e.srv.URL+tt.path, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, tt.contentType) {
				t.Errorf("Content-Type %q, want %s…", ct, tt.contentType)
			}
			if tt.bodyHas != "" && !strings.Contains(string(body), tt.bodyHas) {
				t.Errorf("body lacks %q:\n%.400s", tt.bodyHas, body)
			}
			csp := resp.Header.Get("Content-Security-Policy")
			if tt.ui {
				for _, want := range []string{"script-src 'self'", "connect-src 'self'", "img-src 'self' data:", "object-src 'none'", "require-trusted-types-for 'script'"} {
					if !strings.Contains(csp, want) {
						t.Errorf("CSP %q lacks %q", csp, want)
					}
				}
				if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
					t.Errorf("CSP allows inline or eval: %q", csp)
				}
				if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Referrer-Policy") != "no-referrer" || resp.Header.Get("ETag") == "" {
					t.Errorf("headers: %v", resp.Header)
				}
				if tt.method == "HEAD" && len(body) != 0 {
					t.Errorf("HEAD answered a body of %d bytes", len(body))
				}
			} else if csp != "" {
				t.Errorf("API response carries the UI's CSP")
			}
			if tt.errCode != "" {
				var apiErr struct {
					Error struct{ Message, Type, Code string }
				}
				if err := json.Unmarshal(body, &apiErr); err != nil || apiErr.Error.Code != tt.errCode || apiErr.Error.Message == "" {
					t.Errorf("error body %s, want code %s", body, tt.errCode)
				}
			}
		})
	}
}

// Files are revalidated by ETag, so a reload transfers nothing that did
// not change.
func TestUIConditionalGet(t *testing.T) {
	e := newEnv(t, nil)
	resp, err := http.Get(e.srv.URL + "/assets/js/app.js")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	tag := resp.Header.Get("ETag")
	if tag == "" || resp.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("ETag %q, Cache-Control %q", tag, resp.Header.Get("Cache-Control"))
	}
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/assets/js/app.js", nil)
	req.Header.Set("If-None-Match", tag)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotModified {
		t.Errorf("revalidation answered %d, want 304", resp.StatusCode)
	}
	other, _ := http.Get(e.srv.URL + "/assets/app.css")
	other.Body.Close()
	if other.Header.Get("ETag") == tag {
		t.Error("different files share an ETag")
	}
}
