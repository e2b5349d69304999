package server_test

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// GET /api/image: remote images through the guarded proxy, for signed-in
// users only, with the headers that keep them images.
func TestImageProxy(t *testing.T) {
	var pic bytes.Buffer
	if err := png.Encode(&pic, image.NewGray(image.Rect(0, 0, 3, 3))); err != nil {
		t.Fatal(err)
	}
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/thumb.png":
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write(pic.Bytes())
		case "/big.png":
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write(bytes.Repeat([]byte{1}, 3<<10))
		default:
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, "<html><script>alert(1)</script></html>")
		}
	}))
	defer origin.Close()
	// The fakes are on 127.0.0.1, which the test configuration allows
	// (SOVA_FETCH_ALLOW_HOSTS); the metadata address stays refused.
	e := newEnv(t, map[string]string{"SOVA_IMAGE_PROXY_MAX_BYTES": "2KiB"})
	get := func(target, user string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest("GET", e.srv.URL+"/api/image?url="+url.QueryEscape(target), nil)
		if user != "" {
			req.Header.Set(testUserHeader, user)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}

	resp, body := get(origin.URL+"/thumb.png", "")
	if resp.StatusCode != 200 || !bytes.Equal(body, pic.Bytes()) {
		t.Fatalf("image: %d %q", resp.StatusCode, body)
	}
	for k, want := range map[string]string{
		"Content-Type": "image/png", "X-Content-Type-Options": "nosniff",
		"Cache-Control": "private, max-age=86400, immutable", "Content-Security-Policy": "default-src 'none'; sandbox",
	} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}

	if resp, _ := get(origin.URL+"/thumb.png", "-"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without a user: %d, want 401", resp.StatusCode)
	}
	for _, tc := range []struct {
		url    string
		status int
		code   string
	}{
		{"http://169.254.169.254/latest/meta-data/", 403, "address_refused"},
		{"http://[::ffff:169.254.169.254]/", 403, "address_refused"},
		{origin.URL + "/page", 415, "not_an_image"},
		{origin.URL + "/big.png", 502, "image_too_large"},
		{"ftp://example.com/a.png", 400, "invalid_url"},
	} {
		resp, body := get(tc.url, "")
		var eb struct {
			Error struct{ Code, Message string }
		}
		_ = json.Unmarshal(body, &eb)
		if resp.StatusCode != tc.status || eb.Error.Code != tc.code {
			t.Errorf("%s: %d %s", tc.url, resp.StatusCode, body)
		}
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "image/") {
			t.Errorf("%s: an error served as %s", tc.url, resp.Header.Get("Content-Type"))
		}
	}
}
