package run

import (
	"context"
	"errors"

	"github.com/sova-ai/sova"
	"github.com/sova-ai/sova/internal/mode"
)

// storeFault marks an error of the store under a run's workspace (a full
// disk, a lost database): the run did nothing wrong, and a durable run is
// handed back (handBack) to be continued from its last checkpoint rather
// than failed while another node may finish it.
type storeFault struct{ err error }

func (f *storeFault) Error() string { return f.err.Error() }
func (f *storeFault) Unwrap() error { return f.err }

// faulted marks err as the store's fault, unless it is an answer about
// the data (not found, invalid) or the run's own context ending.
func faulted(err error) error {
	switch {
	case err == nil, errors.Is(err, sova.ErrNotFound), errors.Is(err, sova.ErrInvalid), errors.Is(err, sova.ErrConflict),
		errors.Is(err, mode.ErrNoFile), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return &storeFault{err: err}
}

// isStoreFault reports whether a run's error came from its store.
func isStoreFault(err error) bool {
	var f *storeFault
	return errors.As(err, &f)
}
