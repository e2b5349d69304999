// Package dateparser stands in for github.com/markusmobius/go-dateparser
// in Sova's build (see the replace directive in Sova's go.mod and
// docs/architecture.md, "Dependencies").
//
// go-htmldate, which trafilatura uses to find a page's date, links the
// original package, whose language tables for 200 locales (thousands of
// regular expressions) are built when the program starts: about 200 ms
// and 78 MB of allocations in every sova process, CLI calls and parser
// workers included. Sova runs htmldate in its fast mode, which never calls
// the date parser, so this module keeps only the API htmldate is compiled
// against and parses a small set of absolute formats (ISO 8601, RFC 1123
// and English dates such as "2 January 2024" or "January 2, 2024") with
// the standard library.
package dateparser

import (
	"errors"
	"strings"
	"sync"
	"time"
)

// ParserType names a kind of parsing; only the absolute kinds are
// implemented here.
type ParserType uint8

// The parser types htmldate asks for.
const (
	Timestamp ParserType = iota
	NegativeTimestamp
	RelativeTime
	CustomFormat
	AbsoluteTime
	NoSpacesTime
)

// PreferredDateSource says how incomplete dates are completed; dates
// without a day, month and year are refused here, so it is kept only for
// the API.
type PreferredDateSource uint8

// The date sources.
const (
	CurrentPeriod PreferredDateSource = iota
	Past
	Future
)

// Configuration is the parser's configuration, as htmldate fills it in.
type Configuration struct {
	PreferredDateSource PreferredDateSource
	StrictParsing       bool
	DefaultTimezone     *time.Location
}

// Date is a parsed date.
type Date struct {
	Time time.Time
}

// IsZero reports whether no date was found.
func (d Date) IsZero() bool { return d.Time.IsZero() }

// Parser parses date strings. Its zero value is ready; it is safe for
// concurrent use.
type Parser struct {
	sync.Mutex
	ParserTypes []ParserType
}

// ErrNotParsed is returned for a string in none of the formats known.
var ErrNotParsed = errors.New("dateparser: not a date in a known absolute format")

// layouts are the absolute formats tried, in order.
var layouts = []string{
	time.RFC3339Nano, time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02",
	time.RFC1123Z, time.RFC1123, time.RFC850, time.ANSIC,
	"2 January 2006", "2 Jan 2006", "January 2, 2006", "Jan 2, 2006", "January 2 2006", "Jan 2 2006",
	"Monday, 2 January 2006", "Monday, January 2, 2006", "Mon, 2 Jan 2006", "Mon, Jan 2, 2006",
	"2006/01/02", "02.01.2006", "2.1.2006",
}

// Parse parses str as one of the absolute formats above (formats, when
// given, are Go layouts tried first).
func (p *Parser) Parse(cfg *Configuration, str string, formats ...string) (Date, error) {
	s := strings.Join(strings.Fields(str), " ")
	s = strings.TrimSuffix(strings.TrimSuffix(s, "."), ",")
	loc := time.UTC
	if cfg != nil && cfg.DefaultTimezone != nil {
		loc = cfg.DefaultTimezone
	}
	for _, l := range append(formats, layouts...) {
		if t, err := time.ParseInLocation(l, s, loc); err == nil {
			return Date{Time: t}, nil
		}
	}
	return Date{}, ErrNotParsed
}
