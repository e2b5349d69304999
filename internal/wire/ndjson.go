package wire

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"

	"github.com/sova-ai/sova/internal/event"
)

// NDJSON writes each event as one JSON object per line (`sova ask --json`,
// run event logs), flushing after each so that a reader sees progress live.
type NDJSON struct {
	mu     sync.Mutex
	w      io.Writer
	flush  func()
	err    error
	closed bool
}

// NewNDJSON returns an NDJSON encoder writing to w. flush, if not nil, is
// called after every line.
func NewNDJSON(w io.Writer, flush func()) *NDJSON {
	return &NDJSON{w: w, flush: flush}
}

var _ Encoder = (*NDJSON)(nil)

// Emit writes one line. It is safe for concurrent use.
func (n *NDJSON) Emit(e event.Event) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // read by programs; keep text as it is
	if err := enc.Encode(e); err != nil {
		return invalid(err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return ErrClosed
	}
	if n.err != nil {
		return n.err
	}
	if _, err := n.w.Write(b.Bytes()); err != nil {
		n.err = err
		return err
	}
	if n.flush != nil {
		n.flush()
	}
	return nil
}

// Close marks the encoder closed; NDJSON has no trailer.
func (n *NDJSON) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closed = true
	return nil
}
