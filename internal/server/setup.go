package server

// SetupProblem is one thing the server's own start-up checks found that
// makes it unusable (the model endpoint unreachable, its key refused, a
// model it does not serve), with what an administrator sets to fix it.
// Only the check's name and the fix are shown to the browser: the
// details can carry the endpoint's address and its own words.
type SetupProblem struct {
	Check string `json:"check"`
	Fix   string `json:"fix,omitempty"`
}

// SetupChecker answers the problems the start-up checks found; none while
// they are still running or when they all passed.
type SetupChecker interface {
	SetupProblems() []SetupProblem
}

// setupProblems is what GET /api/modes reports under "setup".
func (s *Server) setupProblems() []SetupProblem {
	if s.opt.Setup == nil {
		return nil
	}
	return s.opt.Setup.SetupProblems()
}
