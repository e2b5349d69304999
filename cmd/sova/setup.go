package main

import (
	"sync"

	"github.com/sova-ai/sova/internal/doctor"
	"github.com/sova-ai/sova/internal/server"
)

// startChecks keeps what the start-up checks of the model endpoint found,
// for the UI's setup banner (GET /api/modes "setup"). They run in the
// background while the server already answers, hence the lock.
type startChecks struct {
	mu     sync.Mutex
	failed []server.SetupProblem
}

func (s *startChecks) record(r doctor.Report) {
	var failed []server.SetupProblem
	for _, c := range r.Failed() {
		failed = append(failed, server.SetupProblem{Check: c.Name, Fix: c.Fix})
	}
	s.mu.Lock()
	s.failed = failed
	s.mu.Unlock()
}

// SetupProblems implements server.SetupChecker.
func (s *startChecks) SetupProblems() []server.SetupProblem {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]server.SetupProblem(nil), s.failed...)
}
