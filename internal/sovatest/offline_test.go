package sovatest

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestOffline(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	defer srv.Close()
	c := Offline(srv.Client())
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatalf("a local fake was refused: %v", err)
	}
	_ = resp.Body.Close()
	for _, u := range []string{"https://arxiv.org/favicon.ico", "http://8.8.8.8/x.png", "http://[2001:4860:4860::8888]/"} {
		if resp, err := c.Get(u); err == nil {
			_ = resp.Body.Close()
			t.Errorf("%s was reached", u)
		}
	}
}
