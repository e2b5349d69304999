package config

import (
	"strings"
	"testing"
	"time"
)

func TestParseLimits(t *testing.T) {
	cfg, err := FromEnv(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ParseTimeout != 20*time.Second || cfg.ParseMemory != 512<<20 {
		t.Errorf("defaults: %s, %s", cfg.ParseTimeout, cfg.ParseMemory)
	}
	tests := []struct {
		value string
		want  ByteSize
	}{{"1GiB", 1 << 30}, {"256 MiB", 256 << 20}, {"100MB", 100_000_000}, {"67108864", 64 << 20}}
	for _, tt := range tests {
		cfg, err := FromEnv(map[string]string{"SOVA_PARSE_MEMORY": tt.value, "SOVA_PARSE_TIMEOUT": "5s"})
		if err != nil || cfg.ParseMemory != tt.want || cfg.ParseTimeout != 5*time.Second {
			t.Errorf("%q: %v %v", tt.value, cfg, err)
		}
	}
	for vars, want := range map[[2]string]string{
		{"SOVA_PARSE_MEMORY", "lots"}:   `SOVA_PARSE_MEMORY="lots" is not a valid config.ByteSize`,
		{"SOVA_PARSE_MEMORY", "1MiB"}:   "SOVA_PARSE_MEMORY must be at least 32MiB, got 1.0 MiB",
		{"SOVA_PARSE_TIMEOUT", "10ms"}:  "SOVA_PARSE_TIMEOUT must be at least 1s, got 10ms",
		{"SOVA_PARSE_TIMEOUT", "never"}: `SOVA_PARSE_TIMEOUT="never"`,
	} {
		_, err := FromEnv(map[string]string{vars[0]: vars[1]})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s=%s: err = %v, want %q", vars[0], vars[1], err, want)
		}
	}
}
