package server_test

import (
	"bufio"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkAnswerEndsTheWait measures, per mode over HTTP with follow-up
// suggestions on and a model that answers after 200 ms, how long after
// the answer's last token the stream's finish comes: the critical path
// ratio is the time to finish over the time to the last token (1.00:
// nothing after the answer holds the finish).
//
//	go test -run '^$' -bench AnswerEndsTheWait -benchtime 5x ./internal/server/
func BenchmarkAnswerEndsTheWait(b *testing.B) {
	e := newEnvTB(b, map[string]string{"SOVA_DISABLE_FOLLOWUPS": "false"})
	e.model.Latency = 200 * time.Millisecond
	for _, group := range []string{"search", "deep_search", "web"} {
		b.Run(group, func(b *testing.B) {
			var ratios, after []float64
			i := 0
			for range b.N {
				i++
				body := fmt.Sprintf(`{"group":%q,"messages":[{"role":"user","content":"How did presidents describe the economy in the 1930s, take %d?"}]}`, group, i)
				start := time.Now()
				resp, err := http.Post(e.srv.URL+"/api/search", "application/json", strings.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				var last, finish time.Duration
				sc := bufio.NewScanner(resp.Body)
				sc.Buffer(make([]byte, 1<<20), 1<<20)
				for sc.Scan() {
					line := sc.Text()
					switch {
					case strings.Contains(line, `"type":"text-delta"`):
						last = time.Since(start)
					case strings.Contains(line, `"type":"finish"`):
						finish = time.Since(start)
					case strings.Contains(line, `"type":"error"`):
						b.Fatalf("%s: %s", group, line)
					}
				}
				resp.Body.Close()
				if last == 0 || finish == 0 {
					b.Fatalf("%s: no answer or no finish (%s, %s)", group, last, finish)
				}
				ratios = append(ratios, finish.Seconds()/last.Seconds())
				after = append(after, float64((finish-last).Microseconds())/1000)
			}
			slices.Sort(ratios)
			slices.Sort(after)
			b.ReportMetric(ratios[len(ratios)/2], "finish/last-token")
			b.ReportMetric(after[len(after)/2], "ms-after-last-token")
		})
	}
}
