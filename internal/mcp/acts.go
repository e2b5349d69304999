package mcp

// Acts implements agent.Acting: a tool its server does not mark
// readOnlyHint may change something (send, create, delete), so the loop
// runs it only with the person's approval.
func (t *Tool) Acts() bool { return !t.ReadOnly }
