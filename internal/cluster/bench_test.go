package cluster_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/run"
	"github.com/sova-ai/sova/internal/store"
	"github.com/sova-ai/sova/internal/store/storetest"
)

// BenchmarkCrossNodeLatency measures the time from an event's emission on
// node A to its delivery to a follower on node B, on each backend, and
// where it goes: the stages of the slowest events are logged (-v).
//
//	SOVA_TEST_DATABASE_URL=postgres://… SOVA_TEST_REDIS_URL=redis://… \
//	  go test ./internal/cluster -run '^$' -bench CrossNodeLatency -benchtime 1x -v
func BenchmarkCrossNodeLatency(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			dsn := storetest.PostgresDSN(b)
			m := streaming{n: 400, gap: 10 * time.Millisecond}
			tr := &trace{}
			na := newNode(b, dsn, be, m, nodeOptions{
				store:    func(st *store.DB) run.Store { return &tracedWrites{DB: st, tr: tr} },
				notifier: func(n run.Notifier) run.Notifier { return &tracedPublish{Notifier: n, tr: tr} },
			})
			nb := newNode(b, dsn, be, m, nodeOptions{
				store:    func(st *store.DB) run.Store { return &tracedReads{DB: st, tr: tr} },
				notifier: func(n run.Notifier) run.Notifier { return &tracedNotices{Notifier: n, tr: tr} },
			})
			ctx, cancelFollow := context.WithTimeout(sova.WithUser(context.Background(), ann), time.Minute) // a Follow that fails ends, not hangs
			defer cancelFollow()
			for b.Loop() {
				tr.reset()
				p, err := na.svc.Prepare(ctx, run.Request{Mode: "stream", Messages: []llm.Message{{Role: "user", Content: "q"}}, Persist: true})
				if err != nil {
					b.Fatal(err)
				}
				probe := startLateness()
				na.svc.Start(p)
				var got []delivery
				err = nb.svc.Follow(ctx, p.RunID, 0, func(e event.Event) error {
					if e.Type == event.TypeTextDelta {
						got = append(got, delivery{seq: e.Seq, emitted: e.Time, at: time.Now()})
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				lat := make([]time.Duration, len(got))
				for i, d := range got {
					lat[i] = d.at.Sub(d.emitted)
				}
				slices.Sort(lat)
				b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
				b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
				b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
				b.Log(tr.breakdown(got) + "\n" + probe.stop())
			}
		})
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// delivery is one event as node B's follower got it.
type delivery struct {
	seq         int64
	emitted, at time.Time
}

// span is one store call or notice: when it began and ended, and the
// highest event number it covered.
type span struct {
	from, to time.Time
	seq      int64
}

// trace records node A's writes and notices and node B's notices and
// reads of one run.
type trace struct {
	mu                sync.Mutex
	writes, publishes []span
	notices           []time.Time
	reads             []span
}

func (tr *trace) reset() {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.writes, tr.publishes, tr.notices, tr.reads = nil, nil, nil, nil
}

func (tr *trace) add(list *[]span, s span) {
	tr.mu.Lock()
	*list = append(*list, s)
	tr.mu.Unlock()
}

// breakdown says, for the median event and for the slowest 1%, how long
// each stage took: waiting for the writer (its linger and the write
// before), the write, the notice sent, the notice received, the follower
// reading, and handing the event on.
func (tr *trace) breakdown(got []delivery) string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	type stages struct{ behind, linger, write, publish, notice, wake, read, hand, total time.Duration }
	var all []stages
	for _, d := range got {
		w := firstCovering(tr.writes, d.seq)
		r := firstCovering(tr.reads, d.seq)
		if w < 0 || r < 0 || w >= len(tr.publishes) {
			continue
		}
		ws, ps, rs := tr.writes[w], tr.publishes[w], tr.reads[r]
		// The notice that woke the read: the last one B got before it.
		note := rs.from
		for _, n := range tr.notices {
			if n.After(ps.from) && !n.After(rs.from) {
				note = n
				break
			}
		}
		// Waiting for the writer: behind the write in flight when the
		// event came, then the linger (and the writer being scheduled).
		free := d.emitted
		if w > 0 && tr.writes[w-1].to.After(free) {
			free = tr.writes[w-1].to
		}
		all = append(all, stages{
			behind: free.Sub(d.emitted), linger: ws.from.Sub(free), write: ws.to.Sub(ws.from), publish: ps.to.Sub(ps.from),
			notice: note.Sub(ps.from), wake: rs.from.Sub(note), read: rs.to.Sub(rs.from), hand: d.at.Sub(rs.to),
			total: d.at.Sub(d.emitted),
		})
	}
	if len(all) == 0 {
		return "no stages traced"
	}
	slices.SortFunc(all, func(a, b stages) int { return int(a.total - b.total) })
	line := func(name string, ss []stages) string {
		var sum stages
		for _, s := range ss {
			sum.behind += s.behind
			sum.linger += s.linger
			sum.write += s.write
			sum.publish += s.publish
			sum.notice += s.notice
			sum.wake += s.wake
			sum.read += s.read
			sum.hand += s.hand
			sum.total += s.total
		}
		n := time.Duration(len(ss))
		r := func(d time.Duration) string { return (d / n).Round(100 * time.Microsecond).String() }
		return fmt.Sprintf("%s (%d events): total %s = behind a write %s + linger %s + write %s + notify %s + notice %s + wake %s + read %s + hand %s",
			name, len(ss), r(sum.total), r(sum.behind), r(sum.linger), r(sum.write), r(sum.publish), r(sum.notice), r(sum.wake), r(sum.read), r(sum.hand))
	}
	top := all[len(all)*99/100:]
	var b strings.Builder
	b.WriteString(line("median", all[len(all)/2:len(all)/2+1]) + "\n")
	b.WriteString(line("slowest 1%", top) + "\n")
	fmt.Fprintf(&b, "writes %d, notices sent %d, received %d, reads %d", len(tr.writes), len(tr.publishes), len(tr.notices), len(tr.reads))
	return b.String()
}

// firstCovering is the index of the first span that covers event seq.
func firstCovering(spans []span, seq int64) int {
	for i, s := range spans {
		if s.seq >= seq {
			return i
		}
	}
	return -1
}

// tracedWrites times node A's event writes.
type tracedWrites struct {
	*store.DB
	tr *trace
}

func (s *tracedWrites) AppendEvents(ctx context.Context, evs []sova.RunEvent) error {
	from := time.Now()
	err := s.DB.AppendEvents(ctx, evs)
	if err == nil && len(evs) > 0 {
		s.tr.add(&s.tr.writes, span{from: from, to: time.Now(), seq: evs[len(evs)-1].Seq})
	}
	return err
}

// tracedPublish times node A's notices.
type tracedPublish struct {
	run.Notifier
	tr *trace
}

func (n *tracedPublish) Publish(ctx context.Context, ids []string) error {
	from := time.Now()
	err := n.Notifier.Publish(ctx, ids)
	n.tr.add(&n.tr.publishes, span{from: from, to: time.Now()})
	return err
}

// tracedNotices records when node B receives a notice.
type tracedNotices struct {
	run.Notifier
	tr *trace
}

func (n *tracedNotices) Subscribe(runID string) (<-chan struct{}, func()) {
	in, stop := n.Notifier.Subscribe(runID)
	out := make(chan struct{}, 1)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-in:
				n.tr.mu.Lock()
				n.tr.notices = append(n.tr.notices, time.Now())
				n.tr.mu.Unlock()
				select {
				case out <- struct{}{}:
				default:
				}
			case <-done:
				return
			}
		}
	})
	return out, func() { stop(); close(done); wg.Wait() }
}

// tracedReads times node B's reads of the log.
type tracedReads struct {
	*store.DB
	tr *trace
}

func (s *tracedReads) RunEvents(ctx context.Context, runID string, after int64) ([]sova.RunEvent, error) {
	from := time.Now()
	evs, err := s.DB.RunEvents(ctx, runID, after)
	if err == nil && len(evs) > 0 {
		s.tr.add(&s.tr.reads, span{from: from, to: time.Now(), seq: evs[len(evs)-1].Seq})
	}
	return evs, err
}

// lateness measures how late a goroutine that sleeps 5 ms at a time
// wakes: on a busy machine, what every hop of an event (goroutines and
// database processes woken in turn) may wait for a CPU.
type lateness struct {
	stopped chan struct{}
	done    chan []time.Duration
}

func startLateness() *lateness {
	l := &lateness{stopped: make(chan struct{}), done: make(chan []time.Duration, 1)}
	go func() {
		var late []time.Duration
		const period = 5 * time.Millisecond
		for {
			t0 := time.Now()
			select {
			case <-time.After(period):
				late = append(late, time.Since(t0)-period)
			case <-l.stopped:
				l.done <- late
				return
			}
		}
	}()
	return l
}

func (l *lateness) stop() string {
	close(l.stopped)
	late := <-l.done
	if len(late) == 0 {
		return ""
	}
	slices.Sort(late)
	q := func(f float64) time.Duration { return late[int(f*float64(len(late)-1))].Round(100 * time.Microsecond) }
	return fmt.Sprintf("a 5 ms sleep woke late by p50 %s, p99 %s, max %s (%d sleeps)", q(0.5), q(0.99), q(1), len(late))
}
