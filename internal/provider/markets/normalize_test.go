package markets

import "testing"

func TestNormalizePeriod(t *testing.T) {
	tests := []struct {
		in, rng, interval string
	}{
		{"1mo", "1mo", "1mo"},
		{"month", "1mo", "1mo"},
		{"aapl month", "1mo", "1mo"},
		{"1 Year", "1y", ""},
		{"5 years", "5y", ""},
		{"weekly", "", "1wk"},
		{"1 day", "1d", "1d"},
		{"YTD", "ytd", ""},
		{"all time", "max", ""},
		{"month or year", "", "1mo"}, // no interval is a year
		{"soon", "", ""},
	}
	for _, tc := range tests {
		if got, ok := NormalizeRange(tc.in); got != tc.rng || ok != (tc.rng != "") {
			t.Errorf("NormalizeRange(%q) = %q, %v; want %q", tc.in, got, ok, tc.rng)
		}
		if got, ok := NormalizeInterval(tc.in); got != tc.interval || ok != (tc.interval != "") {
			t.Errorf("NormalizeInterval(%q) = %q, %v; want %q", tc.in, got, ok, tc.interval)
		}
	}
}
