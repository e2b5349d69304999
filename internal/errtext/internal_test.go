package errtext_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/sova-ai/sova/internal/errtext"
)

var errInvalid = errors.New("invalid input")

// What a person may read of an error is its own part, written for them;
// SQL, an address or a driver's or Go's words never pass.
func TestForPerson(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"a sentinel's detail", fmt.Errorf("store: add memory: %w: the memory is empty", errInvalid), "the memory is empty"},
		{"a package's prefix", errors.New("report: markdown too large to render"), "markdown too large to render"},
		{"a person's sentence", errors.New("nothing to regenerate: the question must be the chat's last stored question"), "nothing to regenerate: the question must be the chat's last stored question"},
		{"select in a sentence", errors.New("select a model from the list"), "select a model from the list"},
		{"SQL", fmt.Errorf("%w: pq: new row for relation \"chats\" violates check constraint \"title_len\"", errInvalid), ""},
		{"a query", errors.New(`SELECT id FROM chats WHERE user_id = $1`), ""},
		{"closed database", errors.New("store: list chats: sql: database is closed"), ""},
		{"Redis", errors.New("limits: redis: connection pool timeout"), ""},
		{"dial", errors.New("dial tcp 10.1.2.3:6379: connect: connection refused"), ""},
		{"an address with its port, scrubbed", errors.New("cannot reach 203.0.113.9:8080"), "cannot reach [address]"},
		{"url.Error", fmt.Errorf("%w: ReadDir /: Propfind \"https://cloud.example.com/dav/\": no such host", errInvalid), ""},
		{"encoding/json", errors.New("json: cannot unmarshal string into Go struct field x.messages of type []server.inMessage"), ""},
		{"cancelled", errors.New("store: get chat c1: context canceled"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := errtext.ForPerson(tc.err, errInvalid); got != tc.want {
				t.Errorf("ForPerson(%q) = %q, want %q", tc.err, got, tc.want)
			}
		})
	}
}

func TestCut(t *testing.T) {
	for in, want := range map[string]string{
		"Frankfurter: no answer within 10s: context deadline exceeded":  "Frankfurter: no answer within 10s",
		"dial tcp 10.1.2.3:5432: connect: connection refused":           "",
		"the model endpoint answered 503":                               "the model endpoint answered 503",
		`listing / on the share: ReadDir /: Propfind "https://x/": EOF`: "listing / on the share",
	} {
		if got := errtext.Cut(in); got != want {
			t.Errorf("Cut(%q) = %q, want %q", in, got, want)
		}
	}
}
