package errtext

import (
	"crypto/rand"
	"encoding/hex"
	"regexp"
	"strings"
)

// internalRE matches what only the operator may read of a failure: SQL,
// a driver's, Go's or a network stack's own words, an address with its
// port. SQL keywords are matched in capitals only, so that "select a
// model from the list" stays a sentence.
var internalRE = regexp.MustCompile(
	`\b(SELECT|INSERT INTO|UPDATE|DELETE FROM)\b.*\b(FROM|WHERE|SET|VALUES|RETURNING)\b` +
		`|(?i:\b(sql|pq|redis|sqlite3?|pgx|pgconn|x509|tls|json|mime|multipart|http2?|strconv\.\w+|proxyconnect)\s*: )` +
		`|(?i:\b(dial|read|write) (tcp|udp|unix)\d?\b)` +
		`|(?i:\blookup \S+( on \S+)?: )` +
		// net/url's "Get \"https://…\": …" and io/fs's "open /x: …".
		"|\\b[A-Z][a-z]+ \"[a-z][a-z0-9+.-]*://[^\"]*\": " +
		`|\b(open|stat|lstat|readdir|ReadDir|mkdir|remove|rename) /\S*: ` +
		`|SQLSTATE|(?i:violates \w+ constraint)|(?i:\bconstraint failed\b)|\brelation "` +
		`|(?i:runtime error|goroutine \d|panic: |Go struct field|Go value of type)` +
		`|\bcontext (canceled|deadline exceeded)\b|i/o timeout|broken pipe|\bunexpected EOF\b|\bEOF\b` +
		`|\b\d{1,3}(\.\d{1,3}){3}:\d{1,5}\b|\[[0-9A-Fa-f:.]+\]:\d{1,5}\b`)

// Internal reports whether s shows what a client must not see: SQL, an
// address with its port, or the words of a driver, of Go or of the
// network stack ("sql: database is closed", "dial tcp …", "pq: …",
// "redis: …", "json: cannot unmarshal …"). A message written for the
// person never does; one that does is for the log only.
func Internal(s string) bool {
	return internalRE.MatchString(s)
}

// Cut is the part of s before the first thing Internal finds in it,
// without the separator that led there ("Frankfurter: no answer within
// 10s: context deadline exceeded" is "Frankfurter: no answer within
// 10s"); s itself when it shows nothing internal, "" when nothing is left.
func Cut(s string) string {
	loc := internalRE.FindStringIndex(s)
	if loc == nil {
		return strings.TrimSpace(s)
	}
	return strings.TrimRight(s[:loc[0]], " \t\n:;,(—-\"")
}

// chainRE matches the "package: operation: " prefix Go code puts before
// a wrapped error.
var chainRE = regexp.MustCompile(`^(store|spaces|memory|connectors|mcp|report|webdav|supermemory|egress|fetch)(: [a-z][a-z0-9 ]{0,40})?: `)

// ForPerson is what a client may be shown of err when its kind is one the
// person can act on (an invalid input, a refused address, a limit): the
// person's part of its text, after the kind's sentinel ("… invalid input:
// a space needs a name" is "a space needs a name") and without a
// package's prefix, addresses scrubbed. It is "" when that text would
// still show something internal (Internal): the caller then answers in
// its own words and logs err.
func ForPerson(err error, sentinels ...error) string {
	if err == nil {
		return ""
	}
	text := err.Error()
	for _, k := range sentinels {
		if k == nil {
			continue
		}
		if i := strings.LastIndex(text, k.Error()+": "); i >= 0 {
			text = text[i+len(k.Error())+2:]
		}
	}
	for {
		loc := chainRE.FindStringIndex(text)
		if loc == nil {
			break
		}
		text = text[loc[1]:]
	}
	text = strings.TrimSpace(Scrub(text))
	if text == "" || Internal(text) {
		return ""
	}
	if r := []rune(text); len(r) > 500 {
		text = string(r[:500]) + "…"
	}
	return text
}

// NewID names one failure: the answer a client gets and the log line
// with the details both carry it.
func NewID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
