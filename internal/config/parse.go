package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
)

// ByteSize is a size in bytes, written as a number of bytes or with a
// unit: "536870912", "512MiB", "512 MB", "1GiB".
type ByteSize int64

// UnmarshalText implements encoding.TextUnmarshaler.
func (b *ByteSize) UnmarshalText(text []byte) error {
	n, err := humanize.ParseBytes(strings.TrimSpace(string(text)))
	if err != nil {
		return fmt.Errorf("not a size (use bytes or a unit such as 512MiB): %w", err)
	}
	if n > 1<<62 {
		return fmt.Errorf("%s is too large", text)
	}
	*b = ByteSize(n)
	return nil
}

// String writes the size with a binary unit.
func (b ByteSize) String() string { return humanize.IBytes(uint64(b)) }

// validateParse checks the limits of parsing untrusted files.
func (c *Config) validateParse() []error {
	var errs []error
	if c.ParseTimeout < time.Second {
		errs = append(errs, fmt.Errorf("SOVA_PARSE_TIMEOUT must be at least 1s, got %s", c.ParseTimeout))
	}
	if c.ParseMemory < 32<<20 {
		errs = append(errs, fmt.Errorf("SOVA_PARSE_MEMORY must be at least 32MiB, got %s", c.ParseMemory))
	}
	return errs
}
