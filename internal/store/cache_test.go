package store_test

import (
	"bytes"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova"
)

func TestCacheContract(t *testing.T) {
	tests := []struct {
		name string
		test func(t *testing.T, db database)
	}{
		{"PutGetReplace", testCachePutGet},
		{"Expiry", testCacheExpiry},
		{"Validation", testCacheValidation},
		{"ConcurrentPuts", testCacheConcurrent},
		{"SurvivesRestart", testCacheSurvivesRestart},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					t.Parallel()
					tt.test(t, b.newDatabase(t))
				})
			}
		})
	}
}

func testCachePutGet(t *testing.T, db database) {
	s := db.open(t)
	ctx := t.Context()
	if _, found, err := s.CacheGet(ctx, sova.CachePage, "k"); err != nil || found {
		t.Fatalf("empty cache: found %v, err %v", found, err)
	}
	value := []byte("{\"markdown\":\"ok\"}\x00\xff binary too")
	if err := s.CachePut(ctx, sova.CachePage, "k", value, time.Hour); err != nil {
		t.Fatal(err)
	}
	got, found, err := s.CacheGet(ctx, sova.CachePage, "k")
	if err != nil || !found || !bytes.Equal(got, value) {
		t.Fatalf("get = %q, %v, %v", got, found, err)
	}
	// Kinds are separate namespaces.
	if _, found, _ := s.CacheGet(ctx, sova.CacheSearch, "k"); found {
		t.Error("a page entry was found as a search entry")
	}
	if err := s.CachePut(ctx, sova.CachePage, "k", []byte("v2"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := s.CacheGet(ctx, sova.CachePage, "k"); string(got) != "v2" {
		t.Errorf("after replace: %q", got)
	}
}

func testCacheExpiry(t *testing.T, db database) {
	s := db.open(t)
	ctx := t.Context()
	if err := s.CachePut(ctx, sova.CacheSearch, "short", []byte("a"), 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := s.CachePut(ctx, sova.CacheSearch, "long", []byte("b"), time.Hour); err != nil {
		t.Fatal(err)
	}
	time.Sleep(120 * time.Millisecond)
	if _, found, err := s.CacheGet(ctx, sova.CacheSearch, "short"); err != nil || found {
		t.Errorf("expired entry: found %v, err %v", found, err)
	}
	n, err := s.CachePurge(ctx, time.Now())
	if err != nil || n != 1 {
		t.Errorf("purge = %d, %v; want the one expired entry", n, err)
	}
	if _, found, _ := s.CacheGet(ctx, sova.CacheSearch, "long"); !found {
		t.Error("purge removed a live entry")
	}
	// A put refreshes an expired key.
	if err := s.CachePut(ctx, sova.CacheSearch, "short", []byte("again"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if v, found, _ := s.CacheGet(ctx, sova.CacheSearch, "short"); !found || string(v) != "again" {
		t.Errorf("refreshed entry = %q, %v", v, found)
	}
}

func testCacheValidation(t *testing.T, db database) {
	s := db.open(t)
	ctx := t.Context()
	for _, c := range []struct {
		kind, key string
		value     []byte
		ttl       time.Duration
	}{
		{"", "k", []byte("v"), time.Hour},
		{sova.CachePage, "", []byte("v"), time.Hour},
		{sova.CachePage, "k", []byte("v"), 0},
		{sova.CachePage, "k", make([]byte, sova.MaxCacheValueBytes+1), time.Hour},
	} {
		if err := s.CachePut(ctx, c.kind, c.key, c.value, c.ttl); !errors.Is(err, sova.ErrInvalid) {
			t.Errorf("put(%q, %q, %d bytes, %s) = %v, want ErrInvalid", c.kind, c.key, len(c.value), c.ttl, err)
		}
	}
}

func testCacheConcurrent(t *testing.T, db database) {
	s := db.open(t)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.CachePut(t.Context(), sova.CachePage, "same", []byte{byte(i)}, time.Hour); err != nil {
				t.Errorf("put %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if v, found, err := s.CacheGet(t.Context(), sova.CachePage, "same"); err != nil || !found || len(v) != 1 {
		t.Errorf("get = %v, %v, %v", v, found, err)
	}
}

func testCacheSurvivesRestart(t *testing.T, db database) {
	s := db.open(t)
	if err := s.CachePut(t.Context(), sova.CachePage, "k", []byte("kept"), time.Hour); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	s2 := db.open(t)
	if v, found, err := s2.CacheGet(t.Context(), sova.CachePage, "k"); err != nil || !found || string(v) != "kept" {
		t.Errorf("after reopening: %q, %v, %v", v, found, err)
	}
}
