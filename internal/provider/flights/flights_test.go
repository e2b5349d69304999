package flights

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/apiclient/apitest"
)

const key = "as-test-key-0123456789"

func client(t *testing.T, srv *apitest.Server) *Client {
	t.Helper()
	c, err := New(Config{APIKey: key, URL: srv.URL, Timeout: 2 * time.Second, RetryBackoff: time.Millisecond})
	if err != nil || c == nil {
		t.Fatalf("New: %v, %v", c, err)
	}
	return c
}

func TestTrack(t *testing.T) {
	wantErr := apitest.ErrorCheck(key)
	tests := []struct {
		name     string
		number   string
		reply    apitest.Reply
		wantHits int
		check    func(t *testing.T, fs []Flight, err error)
	}{
		{name: "flights parsed", number: "ba 283", reply: apitest.Reply{Body: apitest.Fixture(t, "flights_ba283.json")}, wantHits: 1,
			check: func(t *testing.T, fs []Flight, err error) {
				if err != nil {
					t.Fatal(err)
				}
				if len(fs) != 2 {
					t.Fatalf("flights = %+v", fs)
				}
				f := fs[0]
				if f.Status != "active" || f.IATA != "BA283" || f.Airline.Name != "British Airways" || f.Departure.IATA != "LHR" ||
					f.Departure.Gate != "B42" || f.Departure.Delay != 18 || f.Arrival.Baggage != "6" || f.Arrival.Gate != "" ||
					f.Arrival.Estimated != "2024-06-12T14:38:00+00:00" || f.Aircraft == nil || f.Aircraft.Registration != "G-XLEK" ||
					f.Live == nil || f.Live.Speed != 907.424 || f.Live.IsGround {
					t.Errorf("flight = %+v", f)
				}
				if fs[1].Live != nil || fs[1].Aircraft != nil || fs[1].Arrival.Actual != "2024-06-11T14:33:00+00:00" {
					t.Errorf("landed flight = %+v", fs[1])
				}
			}},
		{name: "icao code", number: "BAW283", reply: apitest.Reply{Body: apitest.Fixture(t, "flights_ba283.json")}, wantHits: 1,
			check: func(t *testing.T, fs []Flight, err error) {
				if err != nil || len(fs) != 2 {
					t.Fatal(fs, err)
				}
			}},
		{name: "not a flight number", number: "to London", wantHits: 0,
			check: func(t *testing.T, fs []Flight, err error) {
				if !errors.Is(err, ErrInvalidInput) {
					t.Errorf("err = %v", err)
				}
			}},
		{name: "no such flight", number: "BA9999", reply: apitest.Reply{Body: apitest.Fixture(t, "empty.json")}, wantHits: 1,
			check: func(t *testing.T, fs []Flight, err error) {
				if !errors.Is(err, ErrNotFound) {
					t.Errorf("err = %v", err)
				}
			}},
		{name: "invalid key", number: "BA283", reply: apitest.Reply{Status: 401, Body: apitest.Fixture(t, "invalid_key.json")}, wantHits: 1,
			check: func(t *testing.T, fs []Flight, err error) {
				wantErr(t, err, 401, "AviationStack", "valid API Access Key", "AVIATIONSTACK_API_KEY")
			}},
		{name: "usage limit in a 200", number: "BA283", reply: apitest.Reply{Body: apitest.Fixture(t, "usage_limit.json")}, wantHits: 1,
			check: func(t *testing.T, fs []Flight, err error) {
				if !errors.Is(err, ErrRateLimited) {
					t.Errorf("err = %v", err)
				}
			}},
		{name: "5xx retried then reported", number: "BA283", reply: apitest.Reply{Status: 502, Body: "bad gateway"}, wantHits: 2,
			check: func(t *testing.T, fs []Flight, err error) { wantErr(t, err, 502, "AviationStack", "502") }},
		{name: "bad json", number: "BA283", reply: apitest.Reply{Body: `{"data": [ {"flight_date": 3`}, wantHits: 1,
			check: func(t *testing.T, fs []Flight, err error) {
				wantErr(t, err, 0, "AviationStack", "not the expected JSON")
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := apitest.New(t, apitest.Always(tc.reply))
			fs, err := client(t, srv).Track(context.Background(), tc.number)
			tc.check(t, fs, err)
			reqs := srv.Requests()
			if len(reqs) != tc.wantHits {
				t.Fatalf("%d requests, want %d", len(reqs), tc.wantHits)
			}
			if len(reqs) > 0 {
				r := reqs[0]
				if r.Path != "/v1/flights" || r.Query.Get("access_key") != key {
					t.Errorf("request %s %v", r.Path, r.Query)
				}
				if tc.number == "BAW283" && r.Query.Get("flight_icao") != "BAW283" {
					t.Errorf("query = %v", r.Query)
				}
				if tc.number == "ba 283" && r.Query.Get("flight_iata") != "BA283" {
					t.Errorf("query = %v", r.Query)
				}
			}
		})
	}
}

func TestNewWithoutKey(t *testing.T) {
	if c, err := New(Config{}); c != nil || err != nil {
		t.Errorf("New without a key = %v, %v; want no client", c, err)
	}
	if _, err := New(Config{APIKey: "k", URL: "ftp://x"}); err == nil {
		t.Error("a bad URL was accepted")
	}
}

func TestSettingsDocumented(t *testing.T) {
	apitest.Documented(t, Config{}, "../../../docs/configuration.md")
}
