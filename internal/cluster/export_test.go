package cluster

// Notifiers that ping a quiet connection sooner, for tests.
var (
	NewPGNotifierQuiet    = newPGNotifier
	NewRedisNotifierQuiet = newRedisNotifier
)
