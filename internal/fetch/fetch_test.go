package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// newTestFetcher returns a Fetcher allowed to reach the loopback test
// servers, unless cfg sets AllowHosts itself.
func newTestFetcher(t *testing.T, cfg Config) *Fetcher {
	t.Helper()
	if cfg.AllowHosts == nil {
		cfg.AllowHosts = []string{"127.0.0.1"}
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second * slow // a PDF starts a worker process
	}
	f := New(cfg)
	t.Cleanup(f.Client().CloseIdleConnections)
	return f
}

// countDials makes f count its dial attempts, and optionally pretend DNS
// maps names to other addresses (name:port -> ip:port).
func countDials(f *Fetcher, fakeDNS map[string]string) *atomic.Int32 {
	var n atomic.Int32
	f.testDialAddr = func(addr string) string {
		n.Add(1)
		if to, ok := fakeDNS[addr]; ok {
			return to
		}
		return addr
	}
	return &n
}

func serve(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func staticPage(contentType string, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		} else {
			w.Header()["Content-Type"] = nil // stop net/http sniffing one
		}
		_, _ = w.Write(body)
	}
}

func TestFetchArticleWithBoilerplate(t *testing.T) {
	page, err := os.ReadFile("testdata/boilerplate_article.html")
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/2024/03/tidal/index.html" {
			http.NotFound(w, r)
			return
		}
		if ua := r.Header.Get("User-Agent"); !strings.Contains(ua, "Sova") {
			t.Errorf("User-Agent %q does not name Sova", ua)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(page)
	})
	f := newTestFetcher(t, Config{MaxChars: -1})
	got, err := f.Fetch(context.Background(), srv.URL+"/2024/03/tidal/index.html")
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}

	md := got.Markdown
	for _, want := range []string{
		"## Barrages and lagoons",
		"## Tidal stream turbines",
		"## What comes next",
		"Tidal power turns the regular rise and fall of the sea into electricity.",
		"The La Rance station in Brittany has worked this way since 1966",
		"- Better forecasting that pairs tidal output with battery storage.",
		"could become a steady partner",
		"[2023 tidal stream report](" + srv.URL + "/2024/03/reports/tidal-stream-2023.html)",
		"and in the interactive map.", // javascript: link reduced to its text
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	for _, unwanted := range []string{
		"We use cookies", "Accept all cookies", "Subscribe to our newsletter", "About us",
		"Search the site", "SIDEBAR_POPULAR", "SIDEBAR_AD", "Popular posts",
		"COMMENT_TEXT", "Post comment", "FOOTER_COPYRIGHT", "Terms of use",
		"TRACKING_SCRIPT_TEXT", "INLINE_ARTICLE_SCRIPT", "NOSCRIPT_FALLBACK_TEXT",
		"IFRAME_FALLBACK_TEXT", "data:image", "base64", "javascript:", "font-family", "<script",
	} {
		if strings.Contains(md, unwanted) {
			t.Errorf("Markdown contains boilerplate or active content %q", unwanted)
		}
	}
	if got.Title != "How Tidal Power Works" {
		t.Errorf("Title = %q", got.Title)
	}
	if got.Author != "Maria Lindqvist" || got.SiteName != "Ocean Energy Weekly" || got.Published != "2024-03-15" {
		t.Errorf("metadata = author %q, site %q, published %q", got.Author, got.SiteName, got.Published)
	}
	if got.ContentType != "text/html" || got.Status != 200 || got.Truncated {
		t.Errorf("ContentType %q, Status %d, Truncated %v", got.ContentType, got.Status, got.Truncated)
	}
	if got.URL != srv.URL+"/2024/03/tidal/index.html" {
		t.Errorf("URL = %q", got.URL)
	}
	if got.Chars != utf8.RuneCountInString(md) {
		t.Errorf("Chars = %d, Markdown has %d", got.Chars, utf8.RuneCountInString(md))
	}
}

const russianText = "Съешь же ещё этих мягких французских булок, да выпей чаю."

func russianPage(meta string) string {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html><html><head>" + meta + "<title>Новости науки</title></head><body>")
	b.WriteString("<nav><a href='/'>Главная</a> <a href='/about'>О нас</a></nav><article><h1>Новости науки</h1>")
	for i := 0; i < 6; i++ {
		b.WriteString("<p>" + russianText + " Учёные из Новосибирска представили новый способ хранения энергии, который работает при низких температурах и не требует редких металлов.</p>")
	}
	b.WriteString("</article><footer>Все права защищены</footer></body></html>")
	return b.String()
}

func mustEncode(t *testing.T, enc *charmap.Charmap, s string) []byte {
	t.Helper()
	b, err := enc.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatalf("encoding test page: %v", err)
	}
	return b
}

func TestFetchCharsets(t *testing.T) {
	tests := []struct {
		name        string
		contentType string
		body        []byte
	}{
		{"windows-1251 header only", "text/html; charset=windows-1251",
			mustEncode(t, charmap.Windows1251, russianPage(""))},
		{"windows-1251 header cp1251 alias", "text/html; charset=cp1251",
			mustEncode(t, charmap.Windows1251, russianPage(""))},
		{"windows-1251 meta charset, no header charset", "text/html",
			mustEncode(t, charmap.Windows1251, russianPage(`<meta charset="windows-1251">`))},
		{"windows-1251 http-equiv, no header charset", "text/html",
			mustEncode(t, charmap.Windows1251, russianPage(`<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">`))},
		{"windows-1251 meta after long head", "text/html",
			mustEncode(t, charmap.Windows1251, russianPage("<script>"+strings.Repeat("var x = 1;\n", 200)+"</script><meta charset=windows-1251>"))},
		{"windows-1251 undeclared", "text/html",
			mustEncode(t, charmap.Windows1251, russianPage(""))},
		{"windows-1251 no content type at all", "",
			mustEncode(t, charmap.Windows1251, russianPage(""))},
		{"koi8-r header", "text/html; charset=koi8-r",
			mustEncode(t, charmap.KOI8R, russianPage(""))},
		{"koi8-r undeclared", "text/html",
			mustEncode(t, charmap.KOI8R, russianPage(""))},
		{"utf-8 mislabelled as windows-1251", "text/html; charset=windows-1251",
			[]byte(russianPage(""))},
		{"utf-8 undeclared", "text/html", []byte(russianPage(""))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, staticPage(tt.contentType, tt.body))
			got, err := newTestFetcher(t, Config{}).Fetch(context.Background(), srv.URL)
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			if !strings.Contains(got.Markdown, russianText) {
				t.Errorf("Markdown lacks the Cyrillic sentence; got %.200q", got.Markdown)
			}
			if strings.ContainsRune(got.Markdown, utf8.RuneError) {
				t.Errorf("Markdown contains U+FFFD")
			}
			if got.Title != "Новости науки" {
				t.Errorf("Title = %q", got.Title)
			}
		})
	}
}

func TestFetchTrimsToMaxChars(t *testing.T) {
	var b strings.Builder
	b.WriteString("<html><head><title>Long</title></head><body><article><h1>Long read</h1>")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "<p>Paragraph %d explains, in some detail, how the émigré café owners of the old quarter kept their naïve façades painted every spring — a tradition older than the city itself.</p>", i)
	}
	b.WriteString("</article></body></html>")
	srv := serve(t, staticPage("text/html; charset=utf-8", []byte(b.String())))

	for _, maxChars := range []int{0, 500, 1234} {
		t.Run(strconv.Itoa(maxChars), func(t *testing.T) {
			got, err := newTestFetcher(t, Config{MaxChars: maxChars}).Fetch(context.Background(), srv.URL)
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			limit := maxChars
			if limit == 0 {
				limit = DefaultMaxChars
			}
			n := utf8.RuneCountInString(got.Markdown)
			if n > limit || n < limit/2 {
				t.Errorf("trimmed to %d characters, want at most %d and not much less", n, limit)
			}
			if !got.Truncated || got.Chars <= limit {
				t.Errorf("Truncated = %v, Chars = %d; want true and > %d", got.Truncated, got.Chars, limit)
			}
			if !utf8.ValidString(got.Markdown) {
				t.Error("trimmed Markdown is not valid UTF-8")
			}
			if !strings.HasSuffix(got.Markdown, "itself.") {
				t.Errorf("trimmed Markdown does not end at a paragraph: ...%q", got.Markdown[len(got.Markdown)-40:])
			}
		})
	}
}

func TestFetchSizeLimit(t *testing.T) {
	para := "<p>" + strings.Repeat("Sizeable content keeps coming in this page. ", 20) + "</p>\n"
	body := "<html><head><title>Huge</title></head><body><article><h1>Huge</h1>" +
		strings.Repeat(para, 2000) + "</article></body></html>" // about 1.8 MB
	var written atomic.Int64
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		n, _ := w.Write([]byte(body))
		written.Add(int64(n))
	})
	f := newTestFetcher(t, Config{MaxBytes: 64 << 10, MaxChars: -1})
	got, err := f.Fetch(context.Background(), srv.URL)
	if err != nil {
		t.Fatalf("Fetch of an oversized page: %v", err)
	}
	if !got.Truncated {
		t.Error("Truncated = false for a page larger than MaxBytes")
	}
	if got.Chars > 64<<10 {
		t.Errorf("extracted %d characters from a 64 KiB read", got.Chars)
	}
	if !strings.Contains(got.Markdown, "Sizeable content keeps coming") {
		t.Error("content before the limit is missing")
	}
}

func TestFetchTimeout(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	tests := []struct {
		name    string
		handler http.HandlerFunc
	}{
		{"no headers", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}},
		{"stalled body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<html><body><p>start"))
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, tt.handler)
			f := newTestFetcher(t, Config{Timeout: 300 * time.Millisecond})
			start := time.Now()
			_, err := f.Fetch(context.Background(), srv.URL)
			if err == nil {
				t.Fatal("Fetch succeeded against a stalled server")
			}
			if el := time.Since(start); el > 3*time.Second {
				t.Errorf("Fetch took %s with a 300ms timeout", el)
			}
			if !strings.Contains(err.Error(), "timed out after 300ms") {
				t.Errorf("error %q does not state the timeout", err)
			}
		})
	}
}

func TestFetchCallerCancel(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := newTestFetcher(t, Config{}).Fetch(ctx, srv.URL)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestFetchRedirects(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		// /hop/N redirects N more times, then serves the page.
		n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop/"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		if n > 0 {
			http.Redirect(w, r, "/hop/"+strconv.Itoa(n-1), http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("Arrived after the redirects."))
	})
	tests := []struct {
		maxRedirects int
		hops         int
		wantErr      bool
	}{
		{0, 5, false}, // default 5
		{0, 6, true},
		{3, 3, false},
		{3, 4, true},
		{-1, 0, false},
		{-1, 1, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("max%d_hops%d", tt.maxRedirects, tt.hops), func(t *testing.T) {
			f := newTestFetcher(t, Config{MaxRedirects: tt.maxRedirects})
			got, err := f.Fetch(context.Background(), srv.URL+"/hop/"+strconv.Itoa(tt.hops))
			if tt.wantErr {
				if !errors.Is(err, ErrTooManyRedirects) {
					t.Fatalf("err = %v, want ErrTooManyRedirects", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			if got.URL != srv.URL+"/hop/0" {
				t.Errorf("URL = %q, want the final URL", got.URL)
			}
		})
	}
}

func TestFetchContentTypes(t *testing.T) {
	tests := []struct {
		name        string
		contentType string
		body        []byte
		wantErr     error
		wantMD      string
		wantTitle   string
		wantType    string
	}{
		{"image", "image/png", []byte("\x89PNG\r\n\x1a\n"), ErrUnsupportedType, "", "", ""},
		{"json", "application/json", []byte(`{"a":1}`), ErrUnsupportedType, "", "", ""},
		{"sniffed zip", "application/octet-stream", []byte("PK\x03\x04\x14\x00\x00\x00"), ErrUnsupportedType, "", "", ""},
		{"plain text", "text/plain; charset=utf-8", []byte("Line one.\r\nLine two."), nil, "Line one.\nLine two.", "", "text/plain"},
		{"markdown", "text/markdown", []byte("# Release notes\n\n* Faster *search*.\n"), nil, "# Release notes\n\n* Faster *search*.", "Release notes", "text/markdown"},
		{"sniffed html", "", []byte("<!DOCTYPE html><html><head><title>Sniffed</title></head><body><p>" + strings.Repeat("Served without a content type. ", 10) + "</p></body></html>"), nil, "Served without a content type.", "Sniffed", "text/html"},
		{"empty html", "text/html", []byte("<html><body></body></html>"), ErrNoContent, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, staticPage(tt.contentType, tt.body))
			got, err := newTestFetcher(t, Config{}).Fetch(context.Background(), srv.URL)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			if !strings.Contains(got.Markdown, tt.wantMD) || got.Title != tt.wantTitle || got.ContentType != tt.wantType {
				t.Errorf("got Markdown %q, Title %q, ContentType %q", got.Markdown, got.Title, got.ContentType)
			}
		})
	}
}

func TestUnsupportedTypeErrorDetails(t *testing.T) {
	srv := serve(t, staticPage("application/zip", []byte("PK\x03\x04")))
	_, err := newTestFetcher(t, Config{}).Fetch(context.Background(), srv.URL+"/paper.zip")
	var ue *UnsupportedTypeError
	if !errors.As(err, &ue) || ue.ContentType != "application/zip" || !strings.HasSuffix(ue.URL, "/paper.zip") {
		t.Fatalf("err = %#v, want *UnsupportedTypeError for application/zip", err)
	}
}

func TestFetchHTTPError(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { http.Error(w, "gone", http.StatusNotFound) })
	_, err := newTestFetcher(t, Config{}).Fetch(context.Background(), srv.URL)
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 404 {
		t.Fatalf("err = %v, want *StatusError 404", err)
	}
}

// SSRF: URLs whose host is a forbidden address in any spelling are refused
// before anything is dialled.
func TestSSRFLiteralAddressesRefusedWithoutDial(t *testing.T) {
	f := New(Config{Timeout: 2 * time.Second})
	dials := countDials(f, nil)
	for _, u := range []string{
		"http://10.0.0.1/",
		"http://[::1]/",
		"http://127.0.0.1:8080/admin",
		"http://0x7f.1/",
		"http://2130706433/",
		"http://0177.0.0.1/",
		"http://127.1/",
		"http://[::ffff:127.0.0.1]/",
		"http://[::ffff:7f00:1]/",
		"http://[0:0:0:0:0:ffff:a9fe:a9fe]/",
		"http://169.254.169.254/latest/meta-data/",
		"http://[fd00:ec2::254]/latest/meta-data/",
		"http://metadata.google.internal/computeMetadata/v1/",
		"http://0.0.0.0/",
		"http://100.64.0.1/",
		"http://192.168.1.1/",
		"http://[fe80::1%25eth0]/",
		"file:///etc/passwd",
		"gopher://127.0.0.1:6379/_INFO",
	} {
		t.Run(u, func(t *testing.T) {
			_, err := f.Fetch(context.Background(), u)
			if !errors.Is(err, ErrBlocked) {
				t.Fatalf("Fetch(%s) err = %v, want ErrBlocked", u, err)
			}
			if strings.HasPrefix(u, "http") && !strings.Contains(err.Error(), AllowHostsEnv) {
				t.Errorf("error %q does not say how to allow the address", err)
			}
		})
	}
	if n := dials.Load(); n != 0 {
		t.Errorf("%d dials attempted for refused URLs", n)
	}
}

func TestSSRFRedirectToMetadataRefused(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
	})
	f := newTestFetcher(t, Config{})
	dials := countDials(f, nil)
	_, err := f.Fetch(context.Background(), srv.URL+"/innocent")
	if !errors.Is(err, ErrBlocked) {
		t.Fatalf("err = %v, want ErrBlocked", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "redirect") || !strings.Contains(msg, "169.254.169.254") {
		t.Errorf("error %q should say the redirect to 169.254.169.254 was refused", msg)
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("%d dials, want 1 (only the allowed first hop)", n)
	}
}

// A name that resolves to a forbidden address is refused at dial time, and
// so is a redirect to one, even though the first hop was allowed by name.
func TestSSRFNameResolvingToLoopback(t *testing.T) {
	srv := serve(t, staticPage("text/plain", []byte("internal secret")))
	srvAddr := srv.Listener.Addr().String()
	_, port, _ := net.SplitHostPort(srvAddr)
	fakeDNS := map[string]string{
		"rebind.example:" + port: srvAddr,
		"searx.lan:" + port:      srvAddr,
		"public.example:80":      srvAddr,
	}
	redirector := serve(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://rebind.example:"+port+"/", http.StatusFound)
	})
	_, rport, _ := net.SplitHostPort(redirector.Listener.Addr().String())
	fakeDNS["public.example:"+rport] = redirector.Listener.Addr().String()

	tests := []struct {
		name    string
		allow   []string
		url     string
		blocked bool
	}{
		{"localhost not allowed", []string{}, "http://localhost:" + port + "/", true},
		{"localhost allowed by cidr", []string{"127.0.0.0/8", "::1/128"}, "http://localhost:" + port + "/", false},
		{"localhost allowed by name", []string{"localhost"}, "http://localhost:" + port + "/", false},
		{"rebinding name refused at dial", []string{}, "http://rebind.example:" + port + "/", true},
		{"rebinding name allowed by address", []string{"127.0.0.1"}, "http://rebind.example:" + port + "/", false},
		{"operator host allowed by name", []string{"searx.lan"}, "http://searx.lan:" + port + "/", false},
		{"redirect to rebinding name refused", []string{"public.example"}, "http://public.example:" + rport + "/", true},
		{"wildcard does not cover other names", []string{"*.lan"}, "http://rebind.example:" + port + "/", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTestFetcher(t, Config{AllowHosts: tt.allow})
			countDials(f, fakeDNS)
			got, err := f.Fetch(context.Background(), tt.url)
			if tt.blocked {
				var be *BlockedError
				if !errors.As(err, &be) {
					t.Fatalf("err = %v, want *BlockedError", err)
				}
				if !be.IP.IsLoopback() || be.Host == "" {
					t.Errorf("BlockedError = %+v, want the host and its loopback address", be)
				}
				if !strings.Contains(err.Error(), AllowHostsEnv) {
					t.Errorf("error %q does not say how to allow the address", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			if got.Markdown != "internal secret" {
				t.Errorf("Markdown = %q", got.Markdown)
			}
		})
	}
}

func TestClientIsGuarded(t *testing.T) {
	srv := serve(t, staticPage("text/plain", []byte("ok")))
	f := newTestFetcher(t, Config{})
	c := f.Client()

	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatalf("Get allowed server: %v", err)
	}
	_ = resp.Body.Close()

	for _, u := range []string{"http://10.0.0.1/", "http://[::1]:1/", "http://169.254.169.254/"} {
		resp, err := c.Get(u)
		if err == nil {
			_ = resp.Body.Close()
		}
		if !errors.Is(err, ErrBlocked) {
			t.Errorf("Client().Get(%s) err = %v, want ErrBlocked", u, err)
		}
	}
}

func TestEnvironmentProxyIgnored(t *testing.T) {
	// A proxy from the environment would receive the request instead of
	// the target; the fetcher must connect directly.
	var proxied atomic.Bool
	proxy := serve(t, func(w http.ResponseWriter, r *http.Request) {
		proxied.Store(true)
		http.Error(w, "proxy", http.StatusBadGateway)
	})
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("http_proxy", proxy.URL)
	srv := serve(t, staticPage("text/plain", []byte("direct")))
	// net/http never proxies loopback targets, so use a name (answered by
	// the fake DNS) that an environment proxy would be used for.
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	target := "site.example:" + port
	f := newTestFetcher(t, Config{AllowHosts: []string{"site.example", "127.0.0.1"}})
	countDials(f, map[string]string{target: srv.Listener.Addr().String()})
	got, err := f.Fetch(context.Background(), "http://"+target+"/")
	if err != nil || got.Markdown != "direct" || proxied.Load() {
		t.Fatalf("got %v, %v, proxied=%v; want a direct fetch", got, err, proxied.Load())
	}
}

func TestExplicitProxy(t *testing.T) {
	var seen atomic.Value
	proxy := serve(t, func(w http.ResponseWriter, r *http.Request) {
		seen.Store(r.URL.String())
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("via proxy"))
	})
	// The proxy is reachable although 127.0.0.1 is not in AllowHosts.
	f := newTestFetcher(t, Config{AllowHosts: []string{}, Proxy: proxy.URL})
	got, err := f.Fetch(context.Background(), "http://example.com/page")
	if err != nil {
		t.Fatalf("Fetch through proxy: %v", err)
	}
	if got.Markdown != "via proxy" || seen.Load() != "http://example.com/page" {
		t.Errorf("Markdown %q, proxy saw %v", got.Markdown, seen.Load())
	}
	// Literal private targets are still refused before reaching the proxy.
	if _, err := f.Fetch(context.Background(), "http://10.0.0.1/"); !errors.Is(err, ErrBlocked) {
		t.Errorf("private target through proxy: err = %v, want ErrBlocked", err)
	}
}

func TestBadProxyFailsClosed(t *testing.T) {
	srv := serve(t, staticPage("text/plain", []byte("direct")))
	_, err := newTestFetcher(t, Config{Proxy: "ftp://nope"}).Fetch(context.Background(), srv.URL)
	if err == nil || !strings.Contains(err.Error(), "proxy") {
		t.Fatalf("err = %v, want a proxy configuration error", err)
	}
}

func TestFetchConcurrent(t *testing.T) {
	page, err := os.ReadFile("testdata/boilerplate_article.html")
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, staticPage("text/html; charset=utf-8", page))
	f := newTestFetcher(t, Config{})
	errs := make(chan error, 8)
	for i := 0; i < cap(errs); i++ {
		go func() {
			p, err := f.Fetch(context.Background(), srv.URL)
			if err == nil && !strings.Contains(p.Markdown, "Barrages and lagoons") {
				err = fmt.Errorf("unexpected Markdown %.100q", p.Markdown)
			}
			errs <- err
		}()
	}
	for i := 0; i < cap(errs); i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"zero", Config{}, ""},
		{"good entries", Config{AllowHosts: []string{"searx.lan", "*.corp.lan", "10.0.0.0/8", "127.0.0.1", "::1", "[::1]", "fd00::/8"}}, ""},
		{"bad cidr", Config{AllowHosts: []string{"10.0.0.0/33"}}, "CIDR"},
		{"url", Config{AllowHosts: []string{"http://searx.lan/"}}, "is a URL"},
		{"port", Config{AllowHosts: []string{"searx.lan:8888"}}, "not a host name"},
		{"empty", Config{AllowHosts: []string{" "}}, "empty"},
		{"proxy scheme", Config{Proxy: "ftp://proxy:21"}, "scheme"},
		{"proxy ok", Config{Proxy: "http://proxy.lan:3128"}, ""},
		{"negative bytes", Config{MaxBytes: -1}, "max bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}
