package sgr

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/fetch"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/search"
)

// breakJSON damages a JSON reply the way models do, in one of five ways.
func breakJSON(rng *rand.Rand, s string) (kind, out string) {
	switch rng.IntN(5) {
	case 0:
		return "code fence", "```json\n" + s + "\n```"
	case 1:
		return "prose around", "Here is my next step:\n" + s + "\nLet me know if anything is unclear."
	case 2:
		// The reply stops before its closing braces, as one cut off by a
		// token limit does.
		return "truncated tail", strings.TrimRight(s, "}")
	case 3:
		return "trailing commas", trailingCommas(s)
	}
	return "single quotes", singleQuotes(s)
}

// trailingCommas adds a comma before every closing bracket of a non-empty
// array or object.
func trailingCommas(s string) string {
	var b strings.Builder
	inString, escaped := false, false
	var prev byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		} else if c == '"' {
			inString = true
		} else if (c == '}' || c == ']') && prev != '{' && prev != '[' {
			b.WriteByte(',')
		}
		b.WriteByte(c)
		prev = c
	}
	return b.String()
}

// singleQuotes quotes every string with single quotes.
func singleQuotes(s string) string {
	var b strings.Builder
	inString, escaped := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case !inString && c == '"':
			inString = true
			b.WriteByte('\'')
		case inString && escaped:
			escaped = false
			if c != '"' {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
			b.WriteByte('\'')
		case inString && c == '\'':
			b.WriteString(`\'`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// A model that answers half its structured replies with broken JSON (the
// five kinds above, chosen at random with a fixed seed) costs the agent
// no run: the replies are repaired before any re-ask. The test reports
// the failure rate over 40 runs without re-asks, with one and with the
// default three.
func TestBrokenJSONFromTheModel(t *testing.T) {
	const runs = 40
	for _, reasks := range []int{0, 1, 3} {
		t.Run(fmt.Sprintf("%d re-asks", reasks), func(t *testing.T) {
			e := newEnv(t)
			e.scriptResearch(1)
			var (
				mu     sync.Mutex
				rng    = rand.New(rand.NewPCG(18, 11))
				broken = map[string]int{}
				calls  int
			)
			for step, fn := range e.steps {
				e.steps[step] = func(r *llmtest.Request) llmtest.Reply {
					reply := fn(r)
					mu.Lock()
					defer mu.Unlock()
					calls++
					if rng.IntN(2) == 0 {
						var kind string
						kind, reply.Content = breakJSON(rng, reply.Content)
						broken[kind]++
					}
					return reply
				}
			}
			retries := reasks
			if retries == 0 {
				retries = -1 // none
			}
			c, err := llm.New(llm.Config{
				BaseURL: e.llm.URL(), APIKey: "k", Model: "main-model", MaxRetries: -1, MaxStructuredRetries: retries,
				BackoffBase: time.Millisecond, BackoffMax: time.Millisecond,
			})
			if err != nil {
				t.Fatal(err)
			}
			m := New(e.cfg, c, search.NewChain(search.NewSearXNG(e.sx.URL, nil)),
				fetch.New(fetch.Config{AllowHosts: []string{"127.0.0.1"}}), e.st)
			failed := 0
			for i := range runs {
				res, _, err := e.run(t, m, mode.Input{RunID: fmt.Sprintf("broken-%d", i), UserID: "ann", Question: question})
				if err != nil {
					failed++
					t.Logf("run %d failed: %v", i, err)
					continue
				}
				if !strings.Contains(res.Text, "Hoover promised that prosperity") || len(res.Sources) != 2 {
					t.Errorf("run %d: answer %q with %d sources", i, res.Text, len(res.Sources))
				}
			}
			t.Logf("%d of %d runs failed (%.0f%%) with %d re-asks; %d model calls (%d steps in the runs that finished), broken replies by kind: %v",
				failed, runs, 100*float64(failed)/runs, reasks, calls, 5*(runs-failed), broken)
			if failed > 0 {
				t.Errorf("%d of %d runs failed on broken JSON", failed, runs)
			}
		})
	}
}
