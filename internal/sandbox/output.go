package sandbox

import (
	"fmt"
	"strings"
	"sync"
)

// capped keeps the first and the last part of what is written to it, up
// to a total of max bytes, and counts the rest, which it discards: the
// beginning of the output and the end of a traceback both survive, and
// memory stays bounded however much the code prints. Write never fails,
// so the program's output keeps being drained.
type capped struct {
	mu      sync.Mutex
	max     int
	head    []byte
	tail    []byte // a ring of max-len(head) bytes once head is full
	pos     int    // next write position in tail, once it is full
	dropped int64
}

func newCapped(max int) *capped { return &capped{max: max} }

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	headMax := c.max / 2
	if room := headMax - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	tailMax := c.max - headMax
	for len(p) > 0 {
		if len(c.tail) < tailMax {
			k := min(tailMax-len(c.tail), len(p))
			c.tail = append(c.tail, p[:k]...)
			p = p[k:]
			continue
		}
		// The ring is full: the oldest bytes of the tail give way.
		k := min(tailMax-c.pos, len(p))
		copy(c.tail[c.pos:], p[:k])
		c.dropped += int64(k)
		c.pos = (c.pos + k) % tailMax
		p = p[k:]
	}
	return n, nil
}

// Truncated reports whether output was discarded.
func (c *capped) Truncated() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dropped > 0
}

// String is the output kept, with a note where bytes were discarded.
func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped == 0 {
		return string(c.head) + string(c.tail)
	}
	tail := append(append([]byte{}, c.tail[c.pos:]...), c.tail[:c.pos]...)
	// The cuts may fall inside a character.
	return fmt.Sprintf("%s\n[… %d bytes of output discarded: the limit is %d …]\n%s",
		strings.ToValidUTF8(string(c.head), ""), c.dropped, c.max, strings.ToValidUTF8(string(tail), ""))
}
