package provider_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/provider"
)

func TestLookup(t *testing.T) {
	specs := []provider.Spec{
		{Name: "one", Tools: []string{"a", "b"}, Status: func(tool string) provider.Status {
			return provider.Status{Available: tool == "a", Provider: "one", Settings: []string{"ONE_KEY"}}
		}},
		{Name: "two", Tools: []string{"c"}, Status: func(string) provider.Status {
			return provider.Status{Reason: "turned off"}
		}},
		{Name: "three", Tools: []string{"d"}, Status: func(string) provider.Status { return provider.Status{} }},
	}
	for tool, want := range map[string]provider.Status{
		"a": {Name: "a", Available: true, Provider: "one", Settings: []string{"ONE_KEY"}},
		"b": {Name: "b", Provider: "one", Reason: "needs ONE_KEY", Settings: []string{"ONE_KEY"}},
		"c": {Name: "c", Reason: "turned off"},
		"d": {Name: "d", Reason: "not configured"},
	} {
		got, ok := provider.Lookup(specs, tool)
		if !ok || got.Name != want.Name || got.Available != want.Available || got.Provider != want.Provider || got.Reason != want.Reason ||
			strings.Join(got.Settings, ",") != strings.Join(want.Settings, ",") {
			t.Errorf("%s: %+v, %v; want %+v", tool, got, ok, want)
		}
	}
	if _, ok := provider.Lookup(specs, "e"); ok {
		t.Error("a tool no spec serves has a status")
	}
}

func TestSettingsHelpers(t *testing.T) {
	type alpha struct{ URL string }
	type beta struct{ Key string }
	list := []provider.Settings{{Name: "a", Env: &alpha{URL: "http://a"}}, {Name: "b", Env: &beta{Key: "k"}}}
	if b, ok := provider.Get[beta](list); !ok || b.Key != "k" {
		t.Errorf("Get[beta] = %+v, %v", b, ok)
	}
	if _, ok := provider.Get[struct{ X int }](list); ok {
		t.Error("Get found settings no package keeps")
	}
	u, k := " http://x.local/v1// ", " key "
	provider.TrimURL(&u)
	provider.TrimSpace(&k)
	if u != "http://x.local/v1" || k != "key" {
		t.Errorf("trimmed: %q %q", u, k)
	}
	for _, bad := range []string{"x.local", "ftp://x.local", "http://"} {
		if err := provider.CheckURL("SOVA_X_URL", bad); err == nil || !strings.Contains(err.Error(), "SOVA_X_URL") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if provider.CheckURL("SOVA_X_URL", "https://x.local") != nil || provider.CheckPositive("SOVA_X_TIMEOUT", time.Second) != nil {
		t.Error("a valid setting is refused")
	}
	if err := provider.CheckPositive("SOVA_X_TIMEOUT", 0); err == nil || !strings.Contains(err.Error(), "SOVA_X_TIMEOUT") {
		t.Errorf("0s: %v", err)
	}
	e := errors.New("e")
	if got := provider.Errors(nil, e, nil); len(got) != 1 || got[0] != e {
		t.Errorf("Errors = %v", got)
	}
}
