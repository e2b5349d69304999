package main

import (
	"testing"

	"github.com/sova-ai/sova/internal/doctor"
	"github.com/sova-ai/sova/internal/server"
)

// Only the failed required checks reach the banner, by name and fix: the
// details (addresses, the endpoint's own words) stay in the log.
func TestStartChecksRecord(t *testing.T) {
	var s startChecks
	if got := s.SetupProblems(); len(got) != 0 {
		t.Fatalf("before the checks: %v", got)
	}
	s.record(doctor.NewReport([]doctor.Check{
		{Name: doctor.CheckEndpoint, Status: doctor.OK, Required: true, Detail: "http://10.0.0.5:11434/v1 answers"},
		{Name: doctor.CheckKey, Status: doctor.Fail, Required: true, Detail: "the endpoint refused the key (401): sk-abc…", Fix: "set SOVA_LLM_API_KEY or OPENAI_API_KEY"},
		{Name: doctor.CheckFallback, Status: doctor.Fail, Detail: "optional"},
	}))
	got := s.SetupProblems()
	want := []server.SetupProblem{{Check: doctor.CheckKey, Fix: "set SOVA_LLM_API_KEY or OPENAI_API_KEY"}}
	if len(got) != 1 || got[0] != want[0] {
		t.Errorf("problems = %+v, want %+v", got, want)
	}
	s.record(doctor.NewReport(nil))
	if got := s.SetupProblems(); len(got) != 0 {
		t.Errorf("after passing checks: %v", got)
	}
}
