package config

import (
	"strings"
	"testing"
)

// The settings of search and deep_search have names that match the modes;
// the old SOVA_SPEED_* and SOVA_BALANCED_* names still work, and the new
// name wins when both are set.
func TestRenamedSettings(t *testing.T) {
	get := func(c *Config) map[string]int {
		return map[string]int{
			"SOVA_SEARCH_MAX_ITERATIONS":      c.SpeedMaxIterations,
			"SOVA_DEEP_SEARCH_MAX_ITERATIONS": c.BalancedIterations,
			"SOVA_DEEP_SEARCH_SOURCES":        c.BalancedRerankTopK,
			"SOVA_DEEP_SEARCH_PAGES":          c.BalancedScrapeTopN,
		}
	}
	for _, r := range renamed {
		for _, tt := range []struct {
			name string
			vars map[string]string
			want int
		}{
			{"new name", map[string]string{r.name: "7"}, 7},
			{"old name", map[string]string{r.old: "5"}, 5},
			{"both", map[string]string{r.name: "9", r.old: "3"}, 9},
		} {
			cfg, err := FromEnv(tt.vars)
			if err != nil {
				t.Fatalf("%s %s: %v", r.name, tt.name, err)
			}
			if got := get(cfg)[r.name]; got != tt.want {
				t.Errorf("%s by %s: %d, want %d", r.name, tt.name, got, tt.want)
			}
		}
		// An invalid old value is reported under both names.
		_, err := FromEnv(map[string]string{r.old: "0"})
		if err == nil || !strings.Contains(err.Error(), r.name) || !strings.Contains(err.Error(), r.old) {
			t.Errorf("%s=0: %v", r.old, err)
		}
		_, err = FromEnv(map[string]string{r.old: "many"})
		if err == nil || !strings.Contains(err.Error(), r.old) {
			t.Errorf("%s=many: %v", r.old, err)
		}
	}
}
