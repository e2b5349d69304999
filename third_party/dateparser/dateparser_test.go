package dateparser

import (
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	var p Parser
	for _, tc := range []struct {
		in   string
		want string // "" when no date
	}{
		{"2024-03-05", "2024-03-05"},
		{"2024-03-05T10:00:00Z", "2024-03-05"},
		{"5 March 2024", "2024-03-05"},
		{"March 5, 2024", "2024-03-05"},
		{"Tue, 05 Mar 2024 10:00:00 GMT", "2024-03-05"},
		{"05.03.2024", "2024-03-05"},
		{"  March   5,  2024. ", "2024-03-05"},
		{"three days ago", ""},
		{"", ""},
	} {
		d, err := p.Parse(&Configuration{PreferredDateSource: Past, StrictParsing: true}, tc.in)
		got := ""
		if err == nil {
			got = d.Time.Format(time.DateOnly)
		}
		if got != tc.want {
			t.Errorf("Parse(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
