package config

import (
	"strings"
	"testing"
	"time"
)

func TestSGRSettings(t *testing.T) {
	tests := []struct {
		name    string
		vars    map[string]string
		wantErr string
		check   func(t *testing.T, c *Config)
	}{
		{
			name: "seed defaults",
			check: func(t *testing.T, c *Config) {
				if c.SGRMaxSteps != 6 || c.SGRMaxSearches != 4 || c.SGRMaxClarifications != 3 || c.SGRAgentTTL != 24*time.Hour {
					t.Errorf("got %d %d %d %s", c.SGRMaxSteps, c.SGRMaxSearches, c.SGRMaxClarifications, c.SGRAgentTTL)
				}
			},
		},
		{
			name: "set, and zero disables searches and questions",
			vars: map[string]string{"SOVA_SGR_MAX_STEPS": "10", "SOVA_SGR_MAX_SEARCHES": "0", "SOVA_SGR_MAX_CLARIFICATIONS": "0", "SOVA_SGR_AGENT_TTL": "90m"},
			check: func(t *testing.T, c *Config) {
				if c.SGRMaxSteps != 10 || c.SGRMaxSearches != 0 || c.SGRMaxClarifications != 0 || c.SGRAgentTTL != 90*time.Minute {
					t.Errorf("got %d %d %d %s", c.SGRMaxSteps, c.SGRMaxSearches, c.SGRMaxClarifications, c.SGRAgentTTL)
				}
			},
		},
		{name: "no steps", vars: map[string]string{"SOVA_SGR_MAX_STEPS": "0"}, wantErr: "SOVA_SGR_MAX_STEPS must be at least 1"},
		{name: "negative searches", vars: map[string]string{"SOVA_SGR_MAX_SEARCHES": "-1"}, wantErr: "SOVA_SGR_MAX_SEARCHES"},
		{name: "zero ttl", vars: map[string]string{"SOVA_SGR_AGENT_TTL": "0s"}, wantErr: "SOVA_SGR_AGENT_TTL positive"},
		{name: "unparsable ttl", vars: map[string]string{"SOVA_SGR_AGENT_TTL": "a day"}, wantErr: `SOVA_SGR_AGENT_TTL="a day"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars := map[string]string{"HOME": "/home/ann"}
			for k, v := range tt.vars {
				vars[k] = v
			}
			c, err := FromEnv(vars)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}
