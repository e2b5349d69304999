package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/sova-ai/sova/internal/event"
)

// Errors of encoders. errors.Is tells them apart: an invalid event is
// skipped and the stream goes on; after a write error the stream is dead.
var (
	ErrClosed       = errors.New("wire: encoder closed")
	ErrInvalidEvent = errors.New("wire: invalid event")
)

// invalid marks an encoding error as ErrInvalidEvent.
func invalid(err error) error {
	return fmt.Errorf("%w: %v", ErrInvalidEvent, err)
}

// Encoder is what every wire encoder in this package implements.
type Encoder interface {
	Emit(event.Event) error
	Close() error
}

// sseWriter batches Server-Sent Events frames and writes them in one Write,
// so that the frames of one event reach the client together and a write
// error is seen once. It is not safe for concurrent use; its owner locks.
type sseWriter struct {
	w     io.Writer
	flush func()
	buf   bytes.Buffer
	err   error // first write error; the stream is dead after it
	// id, when positive, is written as the SSE id of each frame: the
	// sequence number of the event being encoded.
	id int64
}

// data appends one `data: <json>` frame. HTML escaping is off because the
// payload is JSON read by programs, and `<`/`>` in answers should stay
// readable on the wire.
func (s *sseWriter) data(v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	// Encode ends with one newline; SSE needs a blank line after the data.
	if s.id > 0 {
		s.buf.WriteString("id: " + strconv.FormatInt(s.id, 10) + "\n")
	}
	s.buf.WriteString("data: ")
	s.buf.Write(b.Bytes())
	s.buf.WriteByte('\n')
	return nil
}

// raw appends text as it is (for `data: [DONE]` and comments).
func (s *sseWriter) raw(text string) { s.buf.WriteString(text) }

// send writes what was appended and flushes.
func (s *sseWriter) send() error {
	if s.err != nil {
		s.buf.Reset()
		return s.err
	}
	if s.buf.Len() == 0 {
		return nil
	}
	_, err := s.w.Write(s.buf.Bytes())
	s.buf.Reset()
	if err != nil {
		s.err = err
		return err
	}
	if s.flush != nil {
		s.flush()
	}
	return nil
}

// discard drops what was appended since the last send, so that an event
// that fails to encode half-way writes nothing.
func (s *sseWriter) discard() { s.buf.Reset() }
