package realtime

import (
	"context"
	"errors"
)

// errNoRealtime is an endpoint that has no Realtime API.
var errNoRealtime = errors.New("the model endpoint has no Realtime API")

func dialUpstream(ctx context.Context, s *session) (backend, error) {
	return nil, errNoRealtime
}
