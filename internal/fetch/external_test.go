package fetch

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

const readerKey = "jina_SECRET0123456789"

// readerService is a local stand-in for Jina Reader or Firecrawl that
// records requests and answers with a fixed status and body.
type readerService struct {
	*httptest.Server
	mu     sync.Mutex
	reqs   []*http.Request
	bodies []string
	status int
	body   string
}

func newReaderService(t *testing.T, status int, body string) *readerService {
	t.Helper()
	s := &readerService{status: status, body: body}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, r.Clone(context.Background()))
		s.bodies = append(s.bodies, string(b))
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(s.status)
		_, _ = io.WriteString(w, s.body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *readerService) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

// jinaBody follows Jina Reader's JSON answer (Accept: application/json).
const jinaBody = `{"code":200,"status":20000,"data":{"title":"Rendered by script","description":"A page built in the browser",` +
	`"url":"https://site.example/app?id=1","content":"# Rendered by script\n\nThis text only exists after JavaScript runs, which is why the plain fetcher saw an empty page and the reader service had to render it.",` +
	`"publishedTime":"2024-05-06T07:08:09Z","usage":{"tokens":42}}}`

// firecrawlBody follows Firecrawl's /v1/scrape answer.
const firecrawlBody = `{"success":true,"data":{"markdown":"Firecrawl rendered this article body, long enough to be worth reading for the question at hand, with its facts.",` +
	`"metadata":{"title":"Firecrawl page","description":"d","language":"en","sourceURL":"https://site.example/fc","url":"https://site.example/fc-final","statusCode":200}}}`

func TestJinaReaderContract(t *testing.T) {
	svc := newReaderService(t, 200, jinaBody)
	r, err := NewExternalReader(ExternalConfig{Service: ReaderJina, BaseURL: svc.URL + "/", APIKey: readerKey})
	if err != nil {
		t.Fatal(err)
	}
	page, err := r.Fetch(context.Background(), "https://site.example/app?id=1")
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	req := svc.reqs[0]
	if req.Method != http.MethodGet || req.URL.RequestURI() != "/https://site.example/app?id=1" {
		t.Errorf("request = %s %s", req.Method, req.URL.RequestURI())
	}
	if req.Header.Get("Authorization") != "Bearer "+readerKey || req.Header.Get("Accept") != "application/json" {
		t.Errorf("headers = %v", req.Header)
	}
	if page.Title != "Rendered by script" || page.URL != "https://site.example/app?id=1" || page.Published != "2024-05-06" ||
		!strings.Contains(page.Markdown, "only exists after JavaScript runs") || page.ContentType != "text/markdown" || page.Chars < 100 {
		t.Errorf("page = %+v", page)
	}
}

func TestFirecrawlContract(t *testing.T) {
	svc := newReaderService(t, 200, firecrawlBody)
	r, err := NewExternalReader(ExternalConfig{Service: ReaderFirecrawl, BaseURL: svc.URL, APIKey: "fc-KEY", MaxChars: 40})
	if err != nil {
		t.Fatal(err)
	}
	page, err := r.Fetch(context.Background(), "https://site.example/fc")
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	req := svc.reqs[0]
	if req.Method != http.MethodPost || req.URL.Path != "/v1/scrape" || req.Header.Get("Authorization") != "Bearer fc-KEY" {
		t.Errorf("request = %s %s %v", req.Method, req.URL.Path, req.Header)
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(svc.bodies[0]), &body); err != nil {
		t.Fatal(err)
	}
	if body["url"] != "https://site.example/fc" || body["onlyMainContent"] != true || body["formats"].([]any)[0] != "markdown" {
		t.Errorf("body = %v", body)
	}
	if page.Title != "Firecrawl page" || page.URL != "https://site.example/fc-final" || !page.Truncated || len([]rune(page.Markdown)) > 40 {
		t.Errorf("page = %+v", page)
	}
}

func TestExternalReaderErrors(t *testing.T) {
	tests := []struct {
		name    string
		service string
		status  int
		body    string
		wantIn  []string
		wantIs  error
	}{
		{"jina 451", ReaderJina, 451, `{"data":null,"code":451,"name":"SecurityCompromiseError","status":45102,"message":"Domain site.example blocked","readableMessage":"SecurityCompromiseError: Domain site.example blocked until later"}`,
			[]string{"jina reader", "HTTP 451", "SecurityCompromiseError: Domain site.example blocked"}, nil},
		{"jina 401 echoing the key", ReaderJina, 401, `{"data":null,"code":401,"name":"AuthenticationFailedError","message":"Invalid API key ` + readerKey + `"}`,
			[]string{"HTTP 401", "Invalid API key [redacted]"}, nil},
		{"jina empty content", ReaderJina, 200, `{"code":200,"status":20000,"data":{"title":"t","url":"u","content":"  "}}`,
			nil, ErrNoContent},
		{"firecrawl 402", ReaderFirecrawl, 402, `{"success":false,"error":"Payment required to access this resource."}`,
			[]string{"firecrawl reader", "HTTP 402", "Payment required"}, nil},
		{"firecrawl target 404", ReaderFirecrawl, 200, `{"success":true,"data":{"markdown":"Not found","metadata":{"statusCode":404,"sourceURL":"https://site.example/x"}}}`,
			[]string{"HTTP 404"}, nil},
		{"firecrawl success false", ReaderFirecrawl, 200, `{"success":false,"error":"Request timed out"}`,
			[]string{"Request timed out"}, nil},
		{"not JSON", ReaderFirecrawl, 200, `<html>gateway</html>`, []string{"not Firecrawl JSON"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := newReaderService(t, tt.status, tt.body)
			r, err := NewExternalReader(ExternalConfig{Service: tt.service, BaseURL: svc.URL, APIKey: readerKey})
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.Fetch(context.Background(), "https://site.example/x")
			if err == nil {
				t.Fatal("want an error")
			}
			if strings.Contains(err.Error(), readerKey) {
				t.Errorf("error leaks the key: %v", err)
			}
			for _, s := range tt.wantIn {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("err = %v, want %v", err, tt.wantIs)
			}
		})
	}
}

func TestExternalReaderRefusesWhatTheGuardRefuses(t *testing.T) {
	svc := newReaderService(t, 200, jinaBody)
	f := New(Config{})
	r, err := NewExternalReader(ExternalConfig{Service: ReaderJina, BaseURL: svc.URL, CheckURL: f.CheckURL})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"http://169.254.169.254/latest/meta-data/", "http://127.0.0.1:8080/admin", "file:///etc/passwd"} {
		if _, err := r.Fetch(context.Background(), u); err == nil {
			t.Errorf("%s was handed to the reader service", u)
		}
	}
	if svc.count() != 0 {
		t.Errorf("the service got %d requests", svc.count())
	}
}

func TestNewExternalReaderConfig(t *testing.T) {
	if _, err := NewExternalReader(ExternalConfig{Service: "diffbot"}); err == nil {
		t.Error("unknown service accepted")
	}
	if _, err := NewExternalReader(ExternalConfig{Service: ReaderJina, BaseURL: "ftp://x"}); err == nil {
		t.Error("non-http base accepted")
	}
	r, err := NewExternalReader(ExternalConfig{Service: " Firecrawl "})
	if err != nil || r.cfg.BaseURL != DefaultFirecrawlURL || r.Service() != ReaderFirecrawl {
		t.Errorf("defaults: %+v, %v", r, err)
	}
}

// stubReader answers with a fixed page or error and counts calls.
type stubReader struct {
	page  *Page
	err   error
	calls atomic.Int64
}

func (s *stubReader) Fetch(context.Context, string) (*Page, error) {
	s.calls.Add(1)
	return s.page, s.err
}

func TestFallback(t *testing.T) {
	long := &Page{Markdown: strings.Repeat("x", 150), Chars: 150}
	short := &Page{Markdown: "Enable JavaScript to continue.", Chars: 30}
	longer := &Page{Markdown: strings.Repeat("y", 500), Chars: 500}
	boom := errors.New("boom")
	tests := []struct {
		name          string
		primary, next *stubReader
		want          *Page
		wantErr       error
		nextCalls     int64
	}{
		{"long page kept", &stubReader{page: long}, &stubReader{page: longer}, long, nil, 0},
		{"short page replaced", &stubReader{page: short}, &stubReader{page: longer}, longer, nil, 1},
		{"failure replaced", &stubReader{err: &StatusError{Status: 403}}, &stubReader{page: longer}, longer, nil, 1},
		{"short page kept when the fallback fails", &stubReader{page: short}, &stubReader{err: boom}, short, nil, 1},
		{"both fail", &stubReader{err: ErrNoContent}, &stubReader{err: boom}, nil, boom, 1},
		{"blocked address not handed on", &stubReader{err: ErrBlocked}, &stubReader{page: longer}, nil, ErrBlocked, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &Fallback{Primary: tt.primary, Next: tt.next}
			got, err := f.Fetch(context.Background(), "https://site.example/")
			if got != tt.want {
				t.Errorf("page = %+v, want %+v", got, tt.want)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr == nil && err != nil {
				t.Errorf("err = %v", err)
			}
			if n := tt.next.calls.Load(); n != tt.nextCalls {
				t.Errorf("fallback called %d times, want %d", n, tt.nextCalls)
			}
		})
	}
}

// TestFallbackOverHTTP reads a script-built page: the fetcher finds
// almost no text, so Jina Reader (a local fake) renders it.
func TestFallbackOverHTTP(t *testing.T) {
	site := serve(t, staticPage("text/html; charset=utf-8",
		[]byte(`<html><head><title>App</title></head><body><div id="root">Loading…</div><script src="/app.js"></script></body></html>`)))
	svc := newReaderService(t, 200, jinaBody)
	fetcher := newTestFetcher(t, Config{})
	jina, err := NewExternalReader(ExternalConfig{Service: ReaderJina, BaseURL: svc.URL, CheckURL: fetcher.CheckURL})
	if err != nil {
		t.Fatal(err)
	}
	page, err := (&Fallback{Primary: fetcher, Next: jina}).Fetch(context.Background(), site.URL+"/app")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.Markdown, "only exists after JavaScript runs") || svc.count() != 1 {
		t.Errorf("page = %+v, service requests %d", page, svc.count())
	}
	if got := svc.reqs[0].URL.RequestURI(); got != "/"+site.URL+"/app" {
		t.Errorf("the service was asked for %q", got)
	}
}
