package config

import (
	"strings"
	"testing"
)

func TestDeepResearchSettings(t *testing.T) {
	tests := []struct {
		name    string
		vars    map[string]string
		wantErr string
		check   func(t *testing.T, c *Config)
	}{
		{
			name: "seed defaults",
			check: func(t *testing.T, c *Config) {
				got := []int{c.DeepResearchNumAgents, c.DeepResearchMaxSupervisorCalls, c.DeepResearchAgentMaxSteps,
					c.DeepResearchSupervisorMaxIter, c.DeepResearchMaxIterations, c.DeepResearchReflectEvery,
					c.DeepResearchMaxReformulations, c.DeepResearchMemoryNotes, c.DeepResearchSupervisorFindings,
					c.DeepResearchMinDraftChars, c.DeepResearchMinReportChars}
				want := []int{4, 6, 5, 10, 15, 3, 5, 10, 15, 1000, 1500}
				for i := range want {
					if got[i] != want[i] {
						t.Errorf("setting %d = %d, want %d", i, got[i], want[i])
					}
				}
				if !c.DeepResearchDeepSearchFirst || !c.DeepResearchClarify {
					t.Error("the initial deep search and clarifying questions are on by default")
				}
			},
		},
		{
			name: "set",
			vars: map[string]string{"SOVA_DEEP_RESEARCH_NUM_AGENTS": "2", "SOVA_DEEP_RESEARCH_RUN_DEEP_SEARCH_FIRST": "false", "SOVA_DEEP_RESEARCH_ENABLE_CLARIFYING_QUESTIONS": "false"},
			check: func(t *testing.T, c *Config) {
				if c.DeepResearchNumAgents != 2 || c.DeepResearchDeepSearchFirst || c.DeepResearchClarify {
					t.Errorf("got %d %v %v", c.DeepResearchNumAgents, c.DeepResearchDeepSearchFirst, c.DeepResearchClarify)
				}
			},
		},
		{name: "no agents", vars: map[string]string{"SOVA_DEEP_RESEARCH_NUM_AGENTS": "0"}, wantErr: "SOVA_DEEP_RESEARCH_NUM_AGENTS must be at least 1"},
		{name: "too many agents", vars: map[string]string{"SOVA_DEEP_RESEARCH_NUM_AGENTS": "50"}, wantErr: "at most 10"},
		{name: "no supervisor calls", vars: map[string]string{"SOVA_DEEP_RESEARCH_MAX_SUPERVISOR_CALLS": "0"}, wantErr: "SOVA_DEEP_RESEARCH_MAX_SUPERVISOR_CALLS must be at least 1"},
		{name: "unparsable flag", vars: map[string]string{"SOVA_DEEP_RESEARCH_ENABLE_CLARIFYING_QUESTIONS": "maybe"}, wantErr: `SOVA_DEEP_RESEARCH_ENABLE_CLARIFYING_QUESTIONS="maybe"`},
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
					t.Fatalf("err = %v, want it to mention %q", err, tt.wantErr)
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
