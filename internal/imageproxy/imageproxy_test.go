package imageproxy_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/fetch"
	"github.com/sova-ai/sova/internal/imageproxy"
)

// pngBytes is a real 2×2 PNG.
func pngBytes(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// origin serves a PNG, markup, a lying PNG, an oversized image, a slow
// image, a redirect to a metadata address and a 404.
func origin(t *testing.T) *httptest.Server {
	pic := pngBytes(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a.png":
			w.Header().Set("Content-Type", "image/png")
			w.Header().Set("Last-Modified", "Mon, 03 Jun 2024 10:00:00 GMT")
			_, _ = w.Write(pic)
		case "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte("<!doctype html><script>alert(1)</script>"))
		case "/svg":
			w.Header().Set("Content-Type", "image/svg+xml")
			_, _ = w.Write([]byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`))
		case "/binary":
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write([]byte{0, 1, 2, 3, 0xfe, 0xff})
		case "/lying.png":
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write([]byte("<html><body><script>alert(1)</script></body></html>"))
		case "/huge.png": // no Content-Length: the limit must hold while reading
			w.Header().Set("Content-Type", "image/png")
			w.(http.Flusher).Flush()
			chunk := bytes.Repeat([]byte{0}, 64<<10)
			for range 32 {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		case "/declared-huge.png":
			w.Header().Set("Content-Type", "image/png")
			w.Header().Set("Content-Length", "10000000")
			_, _ = w.Write(pic)
		case "/slow.png":
			select {
			case <-time.After(5 * time.Second):
			case <-r.Context().Done():
			}
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestFetch(t *testing.T) {
	srv := origin(t)
	// The origin is on loopback: allowed here as an operator would with
	// SOVA_FETCH_ALLOW_HOSTS, so that the other checks can be seen.
	allowed := &imageproxy.Proxy{Client: fetch.New(fetch.Config{AllowHosts: []string{"127.0.0.1"}}).Client(), MaxBytes: 1 << 20, Timeout: 500 * time.Millisecond}
	guarded := &imageproxy.Proxy{Client: fetch.New(fetch.Config{}).Client()}

	img, err := allowed.Fetch(context.Background(), srv.URL+"/a.png")
	if err != nil {
		t.Fatal(err)
	}
	if img.Type != "image/png" || !bytes.Equal(img.Body, pngBytes(t)) || img.Modified == "" {
		t.Errorf("image = %s, %d bytes, modified %q", img.Type, len(img.Body), img.Modified)
	}

	for _, tc := range []struct {
		name   string
		proxy  *imageproxy.Proxy
		url    string
		status int
		code   string
	}{
		{"loopback refused", guarded, srv.URL + "/a.png", 403, imageproxy.CodeRefused},
		{"localhost refused", guarded, strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/a.png", 403, imageproxy.CodeRefused},
		{"private refused", guarded, "http://10.0.0.1/a.png", 403, imageproxy.CodeRefused},
		{"metadata refused", guarded, "http://169.254.169.254/latest/meta-data/", 403, imageproxy.CodeRefused},
		{"metadata refused even when loopback is allowed", allowed, "http://169.254.169.254/", 403, imageproxy.CodeRefused},
		{"redirect to metadata refused", allowed, srv.URL + "/to-metadata", 403, imageproxy.CodeRefused},
		{"html refused", allowed, srv.URL + "/page", 415, imageproxy.CodeNotImage},
		{"binary refused", allowed, srv.URL + "/binary", 415, imageproxy.CodeNotImage},
		{"svg refused", allowed, srv.URL + "/svg", 415, imageproxy.CodeNotImage},
		{"markup declared as png refused", allowed, srv.URL + "/lying.png", 415, imageproxy.CodeNotImage},
		{"oversize refused while reading", allowed, srv.URL + "/huge.png", 502, imageproxy.CodeTooLarge},
		{"oversize refused by its length", allowed, srv.URL + "/declared-huge.png", 502, imageproxy.CodeTooLarge},
		{"slow origin times out", allowed, srv.URL + "/slow.png", 504, imageproxy.CodeTimeout},
		{"missing image", allowed, srv.URL + "/nothing.png", 502, imageproxy.CodeUpstream},
		{"no url", allowed, "", 400, imageproxy.CodeBadURL},
		{"not http", allowed, "file:///etc/passwd", 400, imageproxy.CodeBadURL},
		{"javascript", allowed, "javascript:alert(1)", 400, imageproxy.CodeBadURL},
		{"relative", allowed, "/a.png", 400, imageproxy.CodeBadURL},
		{"credentials", allowed, "http://u:p@example.com/a.png", 400, imageproxy.CodeBadURL},
		{"too long", allowed, "https://example.com/" + strings.Repeat("a", imageproxy.MaxURLLength), 400, imageproxy.CodeBadURL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img, err := tc.proxy.Fetch(context.Background(), tc.url)
			var pe *imageproxy.Error
			if !errors.As(err, &pe) {
				t.Fatalf("Fetch = %v, %v; want an *Error", img, err)
			}
			if pe.Status != tc.status || pe.Code != tc.code {
				t.Errorf("error = %d %s %q, want %d %s", pe.Status, pe.Code, pe.Message, tc.status, tc.code)
			}
			if strings.Contains(tc.url, "localhost") && strings.Contains(pe.Message, "127.0.0.1") {
				t.Errorf("message names the address the host resolved to: %q", pe.Message)
			}
		})
	}
}
