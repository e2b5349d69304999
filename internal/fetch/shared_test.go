package fetch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestSharedReadsAPageInFlightOnce(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		time.Sleep(50 * time.Millisecond)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<html><head><title>Shared</title></head><body><article><p>" +
			strings.Repeat("A page that many runs read at the same moment. ", 20) + "</p></article></body></html>"))
	}))
	defer srv.Close()
	r := NewShared(New(Config{AllowHosts: []string{"127.0.0.1"}}))
	urls := []string{srv.URL + "/a", srv.URL + "/a#part", strings.Replace(srv.URL, "http://", "HTTP://", 1) + "/a", srv.URL + "/a"}
	var wg sync.WaitGroup
	pages := make([]*Page, len(urls))
	for i, u := range urls {
		wg.Go(func() {
			p, err := r.Fetch(context.Background(), u)
			if err != nil {
				t.Errorf("%s: %v", u, err)
				return
			}
			pages[i] = p
		})
	}
	wg.Wait()
	if n := hits.Load(); n != 1 {
		t.Errorf("the page was fetched %d times, want once", n)
	}
	if pages[0] == nil || pages[1] == nil {
		t.Fatal("no page")
	}
	pages[0].Title = "changed"
	if pages[1].Title == "changed" {
		t.Error("callers share one Page value")
	}
	// Another page is its own read.
	if _, err := r.Fetch(context.Background(), srv.URL+"/b"); err != nil || hits.Load() != 2 {
		t.Errorf("another page: %v, %d fetches", err, hits.Load())
	}
}
