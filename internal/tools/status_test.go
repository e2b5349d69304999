package tools_test

import (
	"testing"

	"github.com/sova-ai/sova/internal/provider"
	"github.com/sova-ai/sova/internal/tools"
)

// A provider added by one spec has its tool reported: available with its
// service, or withdrawn naming the setting that enables it.
func TestProviderAddedBySpec(t *testing.T) {
	tides := func(key string) provider.Spec {
		return provider.Spec{Name: "tides", Tools: []string{"tide_table"}, Status: func(string) provider.Status {
			s := provider.Status{Available: key != "", Settings: []string{"TIDES_API_KEY", "SOVA_TIDES_URL"}}
			if key != "" {
				s.Provider = "tides.example"
			}
			return s
		}}
	}
	if _, ok := (tools.Providers{}).Status("tide_table"); ok {
		t.Fatal("tide_table has a status before its provider is registered")
	}
	s, ok := tools.Providers{Extra: []provider.Spec{tides("")}}.Status("tide_table")
	if !ok || s.Name != "tide_table" || s.Available || s.Reason != "needs TIDES_API_KEY" {
		t.Errorf("unconfigured: %+v, %v", s, ok)
	}
	s, ok = tools.Providers{Extra: []provider.Spec{tides("k")}}.Status("tide_table")
	if !ok || !s.Available || s.Provider != "tides.example" || s.Reason != "" {
		t.Errorf("configured: %+v, %v", s, ok)
	}
}

// Every tool is served by one provider: two specs claiming a name would
// make the status depend on the order of the list.
func TestProvidersServeDistinctTools(t *testing.T) {
	seen := map[string]string{}
	for _, sp := range (tools.Providers{}).Specs() {
		if sp.Name == "" || len(sp.Tools) == 0 || sp.Status == nil {
			t.Errorf("incomplete spec %+v", sp)
		}
		for _, name := range sp.Tools {
			if other, ok := seen[name]; ok {
				t.Errorf("%s is served by %s and %s", name, other, sp.Name)
			}
			seen[name] = sp.Name
		}
	}
	if len(seen) != 22 {
		t.Errorf("%d tools have a provider, want 22: %v", len(seen), seen)
	}
}
