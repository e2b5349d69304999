package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/auth"
	"github.com/sova-ai/sova/internal/limits"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/realtime"
	"github.com/sova-ai/sova/internal/realtime/realtimetest"
	"github.com/sova-ai/sova/internal/server"
	"github.com/sova-ai/sova/internal/voice"
)

// rtKey is the API key the realtime test server accepts.
const rtKey = "sova_realtime_test_key"

// rtEnv is the assistant's test world with /v1/realtime in front, the
// fake audio API (and Realtime upstream, when given) behind.
type rtEnv struct {
	*asstEnv
	audio *realtimetest.Audio
	rt    *httptest.Server
}

func newRTEnv(t *testing.T, upstreamModel string) *rtEnv { return newRTEnvTLS(t, upstreamModel, false) }

// newRTEnvTLS serves /v1/realtime over TLS when tls is set: the openai
// package's client always dials wss.
func newRTEnvTLS(t *testing.T, upstreamModel string, tls bool) *rtEnv {
	return newRTEnvWith(t, upstreamModel, tls, nil)
}

// newRTEnvWith lets the test change the handler's config and the user the
// key stands for before the server starts.
func newRTEnvWith(t *testing.T, upstreamModel string, tls bool, change func(*rtEnv, *realtime.Config, *sova.User)) *rtEnv {
	t.Helper()
	e := &rtEnv{asstEnv: newAsstEnv(t), audio: realtimetest.NewAudio(t)}
	a := e.app
	user, err := a.Auth.Authenticate(httptest.NewRequest(http.MethodGet, "/api/chats", nil))
	if err != nil {
		t.Fatal(err)
	}
	cfg := realtime.Config{
		Runs: a.Service, Assistant: a.Assistant, Chats: a.Store,
		Voice:         voice.New(voice.Config{BaseURL: e.audio.URL + "/v1", STTModel: "stt", TTSModel: "tts"}),
		Upstream:      realtime.Upstream{BaseURL: e.audio.URL + "/v1", Model: upstreamModel},
		MaxFrameBytes: 64 << 10,
	}
	if change != nil {
		change(e, &cfg, &user)
	}
	h := realtime.New(cfg)
	keyAuth := auth.Func(func(r *http.Request) (sova.User, error) {
		if r.Header.Get("Authorization") == "Bearer "+rtKey {
			return user, nil
		}
		return sova.User{}, auth.ErrUnauthenticated
	})
	e.rt = httptest.NewUnstartedServer(server.New(server.Options{Service: a.Service, Store: a.Store, Auth: keyAuth, Version: "test", Realtime: h}))
	if tls {
		e.rt.StartTLS()
	} else {
		e.rt.Start()
	}
	t.Cleanup(e.rt.Close)
	return e
}

func (e *rtEnv) wsURL(query string) string {
	return "ws" + strings.TrimPrefix(e.rt.URL, "http") + "/v1/realtime?" + query
}

// rtConn is a Realtime client for Go tests.
type rtConn struct {
	t    *testing.T
	c    *websocket.Conn
	seen []map[string]any
}

func dialRT(t *testing.T, url string, opts *websocket.DialOptions) *rtConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, url, opts)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(8 << 20)
	t.Cleanup(func() { c.CloseNow() })
	return &rtConn{t: t, c: c}
}

func bearer(key string) *websocket.DialOptions {
	return &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + key}}}
}

func (r *rtConn) send(v map[string]any) {
	r.t.Helper()
	b, _ := json.Marshal(v)
	if err := r.c.Write(context.Background(), websocket.MessageText, b); err != nil {
		r.t.Fatal(err)
	}
}

// until reads events up to the first of type typ and returns it.
func (r *rtConn) until(typ string) map[string]any {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		_, b, err := r.c.Read(ctx)
		if err != nil {
			r.t.Fatalf("waiting for %s: %v (seen %v)", typ, err, types(r.seen))
		}
		var ev map[string]any
		if err := json.Unmarshal(b, &ev); err != nil {
			r.t.Fatal(err)
		}
		r.seen = append(r.seen, ev)
		if ev["type"] == typ {
			return ev
		}
	}
}

func types(evs []map[string]any) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e["type"].(string))
	}
	return out
}

func (r *rtConn) count(typ string) int {
	n := 0
	for _, e := range r.seen {
		if e["type"] == typ {
			n++
		}
	}
	return n
}

// speech is 300 ms of a loud tone, PCM16 at 24 kHz, base64.
func speech() string {
	pcm := make([]byte, 2*realtime.SampleRate*3/10)
	for i := 0; i+1 < len(pcm); i += 2 {
		v := int16(8000)
		if (i/2/20)%2 == 0 {
			v = -8000
		}
		pcm[i], pcm[i+1] = byte(v), byte(uint16(v)>>8)
	}
	return base64.StdEncoding.EncodeToString(pcm)
}

func TestRealtimeCascadeSpeaksBeforeTheAnswerEnds(t *testing.T) {
	e := newRTEnv(t, "") // an endpoint without Realtime
	e.audio.TTSFirstByte = 20 * time.Millisecond
	e.audio.Say("Что нового по проекту Восток?")
	answer := "Анна предложила вторник [1]. Подробности: https://example.com/x. Ещё {\"json\": true} один пункт."
	e.script(llmtest.Reply{Content: answer, ChunkDelay: 40 * time.Millisecond})

	c := dialRT(t, e.wsURL("model=assistant&chat=voice-1"), bearer(rtKey))
	created := c.until("session.created")
	if s := created["session"].(map[string]any); s["sova"].(map[string]any)["path"] != "cascade" {
		t.Fatalf("session %v", s)
	}
	c.send(map[string]any{"type": "session.update", "session": map[string]any{"type": "realtime", "audio": map[string]any{"input": map[string]any{"turn_detection": nil}}}})
	c.until("session.updated")
	c.send(map[string]any{"type": "input_audio_buffer.append", "audio": speech()})
	c.send(map[string]any{"type": "input_audio_buffer.commit"})
	c.send(map[string]any{"type": "response.create"})
	tr := c.until("conversation.item.input_audio_transcription.completed")
	if tr["transcript"] != "Что нового по проекту Восток?" {
		t.Fatalf("transcript %v", tr)
	}
	c.until("response.output_audio.delta")
	// The first audio came while the answer was still being written: its
	// last sentence is not spoken yet.
	if n := c.count("response.output_audio_transcript.delta"); n != 1 {
		t.Errorf("transcript deltas before the first audio: %d", n)
	}
	done := c.until("response.done")
	if st := done["response"].(map[string]any)["status"]; st != "completed" {
		t.Fatalf("response %v", done)
	}
	said := strings.Join(e.audio.Spoken(), " ")
	for _, bad := range []string{"[1]", "https://", "{", "json"} {
		if strings.Contains(said, bad) {
			t.Errorf("spoken %q has %q", said, bad)
		}
	}
	if len(e.audio.Spoken()) < 3 {
		t.Errorf("spoken sentence by sentence: %q", e.audio.Spoken())
	}
	msgs, err := e.app.Store.ListMessages(context.Background(), e.user, "voice-1")
	if err != nil || len(msgs) != 2 || msgs[0].Content != "Что нового по проекту Восток?" || !strings.Contains(msgs[1].Content, "вторник") {
		t.Fatalf("stored chat: %v %+v", err, msgs)
	}
}

func TestRealtimeRefusesWithoutKeyAndOversizeFrames(t *testing.T) {
	e := newRTEnv(t, "")
	ctx := context.Background()
	for name, opts := range map[string]*websocket.DialOptions{
		"no key": nil, "wrong key": bearer("sova_wrong"),
		"wrong subprotocol key": {Subprotocols: []string{"realtime", realtime.KeyProtocol + "sova_wrong"}},
	} {
		_, resp, err := websocket.Dial(ctx, e.wsURL("model=assistant"), opts)
		if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: %v %v", name, resp, err)
		}
	}
	// A browser's key in the subprotocol is accepted.
	c := dialRT(t, e.wsURL("model=assistant"), &websocket.DialOptions{Subprotocols: []string{"realtime", realtime.KeyProtocol + rtKey}})
	c.until("session.created")
	if c.c.Subprotocol() != "realtime" {
		t.Errorf("subprotocol %q", c.c.Subprotocol())
	}
	// A page of another site cannot open a session.
	_, resp, err := websocket.Dial(ctx, e.wsURL("model=assistant"), &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + rtKey}, "Origin": {"https://evil.example"}}})
	if err == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site: %v %v", resp, err)
	}
	// A bad event is answered with an error; the session goes on.
	c.send(map[string]any{"type": "input_audio_buffer.append", "audio": "%%%"})
	if ev := c.until("error"); ev["error"].(map[string]any)["code"] != "invalid_audio" {
		t.Errorf("error %v", ev)
	}
	// A frame over the limit closes the socket with 1009.
	big, _ := json.Marshal(map[string]any{"type": "input_audio_buffer.append", "audio": strings.Repeat("A", 100<<10)})
	if err := c.c.Write(ctx, websocket.MessageText, big); err != nil {
		// The server may close (and reset) the connection before the
		// whole frame is written: the close it sent is lost with the
		// reset, and the refused write is the answer.
		if !errors.Is(err, syscall.EPIPE) && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("oversize frame: %v", err)
		}
		return
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, _, err = c.c.Read(rctx)
	if websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
		t.Errorf("oversize frame: %v", err)
	}
}

// untilSaid reads up to a finished response whose speech has substr.
// drain reads what comes within a short while; the read that times out
// closes the connection, so it ends a test's conversation.
func (r *rtConn) drain() {
	r.t.Helper()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		_, b, err := r.c.Read(ctx)
		cancel()
		if err != nil {
			return
		}
		var ev map[string]any
		if err := json.Unmarshal(b, &ev); err != nil {
			r.t.Fatal(err)
		}
		r.seen = append(r.seen, ev)
	}
}

func (r *rtConn) untilSaid(substr string) string {
	r.t.Helper()
	for {
		ev := r.until("response.done")
		b, _ := json.Marshal(ev["response"])
		var resp struct {
			Output []realtime.Item `json:"output"`
		}
		_ = json.Unmarshal(b, &resp)
		for _, it := range resp.Output {
			for _, c := range it.Content {
				if c.Transcript != nil && strings.Contains(*c.Transcript, substr) {
					return *c.Transcript
				}
			}
		}
	}
}

// speak sends one turn of the person: audio, commit, response.create.
func (r *rtConn) speak() {
	r.send(map[string]any{"type": "input_audio_buffer.append", "audio": speech()})
	r.send(map[string]any{"type": "input_audio_buffer.commit"})
	r.send(map[string]any{"type": "response.create"})
}

func TestRealtimeUpstreamRunsTheSeedFlows(t *testing.T) {
	e := newRTEnv(t, "gpt-4o-realtime-mini")
	up := realtimetest.NewUpstream(e.audio)
	c := dialRT(t, e.wsURL("model=gpt-4o-realtime-mini&chat=voice-up"), bearer(rtKey))
	if s := c.until("session.created")["session"].(map[string]any); s["sova"].(map[string]any)["path"] != "upstream" {
		t.Fatalf("session %v", s)
	}
	c.send(map[string]any{"type": "session.update", "session": map[string]any{"type": "realtime", "audio": map[string]any{"input": map[string]any{"turn_detection": nil}}}})
	c.until("session.updated")
	if s := up.Sessions(); len(s) == 0 || !s[0].Has("office__list_emails") || !s[0].Has("transfer_to_knowledge") || !s[0].Has("delegateToSupervisor") {
		t.Fatalf("the router's functions: %+v", s)
	}

	// Flow 1: an MCP read, straight from the router.
	e.audio.Say("Покажи письма от Анны")
	up.Script(realtimetest.Reply{Call: "office__list_emails", Args: `{"from":"anna"}`}, realtimetest.Reply{Text: "Нашла три письма от Анны."})
	c.speak()
	c.untilSaid("три письма")
	if n := e.office.Calls(); n == 0 {
		t.Fatal("the MCP server was not called")
	}

	// Flow 2: a hand-off to the knowledge agent, and back.
	e.audio.Say("Что она писала о проекте Восток?")
	up.Script(realtimetest.Reply{Call: "transfer_to_knowledge", Args: `{"reason":"project history"}`},
		realtimetest.Reply{Call: "search_chats", Args: `{"query":"Восток"}`},
		realtimetest.Reply{Text: "В переписке о проекте Восток нашла три обсуждения."})
	c.speak()
	c.untilSaid("три обсуждения")
	c.until("sova.handoff") // back to the router
	// The fake reads the session update a moment after Sova sends it.
	ss := up.Sessions()
	for end := time.Now().Add(3 * time.Second); !ss[len(ss)-1].Has("transfer_to_knowledge") && time.Now().Before(end); ss = up.Sessions() {
		time.Sleep(10 * time.Millisecond)
	}
	var sawKnowledge bool
	for _, s := range ss {
		if s.Has("search_chats") && s.Has("return_to_router") {
			sawKnowledge = true
		}
	}
	if !sawKnowledge || !ss[len(ss)-1].Has("transfer_to_knowledge") {
		t.Fatalf("hand-off and return: %d sessions, last router=%v", len(ss), ss[len(ss)-1].Has("transfer_to_knowledge"))
	}

	// Flow 6, the end: the planning agent's nextResponse said verbatim.
	ask := "Когда удобно: понедельник, среду или пятницу?"
	e.script(llmtest.Calls(call("p1", "finish_plan", `{"decision":"clarify","nextResponse":"`+ask+`","workflowSteps":["Проверил календарь","Нашёл свободные дни"]}`)))
	e.audio.Say("Назначь встречу с ней на следующей неделе")
	up.Script(realtimetest.Reply{Call: "delegateToSupervisor", Args: `{"conversationContext":"встреча с Анной","proposedPlan":"календарь","userIntent":"встреча","complexity":"medium"}`},
		realtimetest.Reply{Echo: true})
	c.speak()
	if got := c.untilSaid("понедельник"); !strings.Contains(got, ask) {
		t.Errorf("nextResponse said as %q", got)
	}

	// A held send: said and shown, run only on an unambiguous yes.
	send := `{"to":"anna@example.com","subject":"Восток","body":"Согласен на вторник."}`
	for _, tt := range []struct {
		answer string
		sent   int
	}{{"Хорошо, но не отправляй", 0}, {"да", 1}} {
		e.audio.Say("Ответь Анне, что я согласен")
		up.Script(realtimetest.Reply{Call: "office__send_email", Args: send}, realtimetest.Reply{Echo: true})
		c.speak()
		q := c.untilSaid("anna@example.com")
		if len(e.office.Sent()) != 0 && tt.sent == 0 {
			t.Fatalf("sent before the decision (question %q)", q)
		}
		e.audio.Say(tt.answer)
		if tt.sent == 0 {
			up.Script(realtimetest.Reply{Echo: true}) // asked again
			c.speak()
			c.untilSaid("ничего не сделано")
			e.audio.Say("нет")
			up.Script(realtimetest.Reply{Text: "Хорошо, не отправляю."})
			c.speak()
			c.untilSaid("не отправляю")
		} else {
			up.Script(realtimetest.Reply{Text: "Отправила."})
			c.speak()
			c.untilSaid("Отправила")
		}
		if n := len(e.office.Sent()); n != tt.sent {
			t.Fatalf("after %q: sent %d, want %d", tt.answer, n, tt.sent)
		}
	}
	if c.count("sova.step") == 0 {
		t.Error("no steps shown")
	}
	// A call with broken arguments is answered with an error, not run.
	e.audio.Say("Отправь письмо")
	up.Script(realtimetest.Reply{Call: "office__send_email", Args: `{"to":`}, realtimetest.Reply{Text: "Не получилось."})
	c.speak()
	c.untilSaid("Не получилось")

	msgs, err := e.app.Store.ListMessages(context.Background(), e.user, "voice-up")
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, m := range msgs {
		all = append(all, m.Role+": "+m.Content)
	}
	joined := strings.Join(all, "\n")
	for _, want := range []string{"user: Покажи письма от Анны", "assistant: Нашла три письма от Анны.", "user: да", ask} {
		if !strings.Contains(joined, want) {
			t.Errorf("the chat lacks %q:\n%s", want, joined)
		}
	}
}

// TestRealtimeFirstAudioLatency measures, for both paths, the time from
// the end of the person's turn (commit) to the first audio delta, with
// the fakes' latencies stated (docs/benchmarks.md):
//
//	go test -run TestRealtimeFirstAudioLatency -v ./internal/server/
func TestRealtimeFirstAudioLatency(t *testing.T) {
	const turns = 5
	answer := "Анна предложила перенести запуск на вторник. Бюджет согласован, смета у Ивана. Остальное без изменений."
	measure := func(c *rtConn, audioType string) (first, whole time.Duration) {
		c.send(map[string]any{"type": "input_audio_buffer.append", "audio": speech()})
		start := time.Now()
		c.send(map[string]any{"type": "input_audio_buffer.commit"})
		c.send(map[string]any{"type": "response.create"})
		c.until(audioType)
		first = time.Since(start)
		c.until("response.done")
		return first, time.Since(start)
	}
	manual := map[string]any{"type": "session.update", "session": map[string]any{"type": "realtime", "audio": map[string]any{"input": map[string]any{"turn_detection": nil}}}}

	t.Run("cascade", func(t *testing.T) {
		e := newRTEnv(t, "")
		e.audio.STTLatency, e.audio.TTSFirstByte = 100*time.Millisecond, 150*time.Millisecond
		c := dialRT(t, e.wsURL("model=assistant"), bearer(rtKey))
		c.until("session.created")
		c.send(manual)
		c.until("session.updated")
		var firsts, wholes []time.Duration
		for range turns {
			e.audio.Say("Что нового?")
			e.script(llmtest.Reply{Content: answer, Delay: 200 * time.Millisecond, ChunkDelay: 20 * time.Millisecond})
			f, w := measure(c, "response.output_audio.delta")
			firsts, wholes = append(firsts, f), append(wholes, w)
		}
		f, w := median(firsts), median(wholes)
		t.Logf("cascade: commit → first audio byte %v (median of %d), → response.done %v; fakes: STT 100ms, model first token 200ms then 4 characters every 20ms, TTS first byte 150ms", f, turns, w)
		if f >= w {
			t.Errorf("first audio %v after the whole response %v", f, w)
		}
	})
	t.Run("upstream", func(t *testing.T) {
		e := newRTEnv(t, "gpt-4o-realtime-mini")
		up := realtimetest.NewUpstream(e.audio)
		up.FirstAudio = 300 * time.Millisecond
		c := dialRT(t, e.wsURL("model=assistant"), bearer(rtKey))
		c.until("session.created")
		c.send(manual)
		c.until("session.updated")
		var firsts []time.Duration
		for range turns {
			e.audio.Say("Что нового?")
			up.Script(realtimetest.Reply{Text: answer})
			f, _ := measure(c, "response.output_audio.delta")
			firsts = append(firsts, f)
		}
		t.Logf("upstream: commit → first audio byte %v (median of %d); fake Realtime model: first audio 300ms after response.create, transcription at once", median(firsts), turns)
	})
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}

// Each of the person's turns on the upstream path counts against their
// daily messages, as a run does: the turn past the limit is refused with
// rate_limit_exceeded, its answer is neither heard nor kept, and the
// count is the same one typed questions use.
func TestRealtimeUpstreamTurnsCountAgainstLimits(t *testing.T) {
	var lim *limits.Limiter
	e := newRTEnvWith(t, "gpt-4o-realtime-mini", false, func(e *rtEnv, c *realtime.Config, u *sova.User) {
		u.ID, u.Role = "voice-fay", sova.RoleFree
		lim = limits.New(limits.Config{Free: limits.Quota{Messages: 2, Extreme: 0}}, limits.StoreCounter{Store: e.app.Store})
		c.Limiter = lim
	})
	up := realtimetest.NewUpstream(e.audio)
	c := dialRT(t, e.wsURL("model=gpt-4o-realtime-mini&chat=voice-limits"), bearer(rtKey))
	c.until("session.created")
	c.send(map[string]any{"type": "session.update", "session": map[string]any{"type": "realtime", "audio": map[string]any{"input": map[string]any{"turn_detection": nil}}}})
	c.until("session.updated")

	for _, q := range []string{"Hello", "What time is it?"} {
		e.audio.Say(q)
		up.Script(realtimetest.Reply{Text: "Answer to " + q})
		c.speak()
		c.untilSaid("Answer to " + q)
	}
	// The third turn is over the limit of two.
	e.audio.Say("One more thing")
	up.Script(realtimetest.Reply{Text: "This must not be heard"})
	c.speak()
	ev := c.until("error")
	if code := ev["error"].(map[string]any)["code"]; code != "rate_limit_exceeded" {
		t.Fatalf("error %v", ev)
	}
	// The fake has answered (its reply is used up) by the time the
	// transcript of the refused turn comes back; nothing of it reached the
	// client.
	c.until("conversation.item.input_audio_transcription.completed")
	for end := time.Now().Add(5 * time.Second); up.Pending() > 0 && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	c.send(map[string]any{"type": "input_audio_buffer.clear"})
	time.Sleep(300 * time.Millisecond)
	c.drain()
	for _, ev := range c.seen {
		if b, _ := json.Marshal(ev); strings.Contains(string(b), "must not be heard") {
			t.Fatalf("the refused turn's answer reached the client: %v", ev)
		}
	}
	if n := c.count("response.done"); n != 2 {
		t.Fatalf("%d responses reached the client, want the 2 admitted turns'", n)
	}
	u, err := lim.Usage(context.Background(), sova.User{ID: "voice-fay", Role: sova.RoleFree})
	if err != nil || u.Messages.Used != 2 || u.Messages.Left != 0 {
		t.Fatalf("usage %+v %v", u, err)
	}
	msgs, err := e.app.Store.ListMessages(context.Background(), "voice-fay", "voice-limits")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if strings.Contains(m.Content, "One more thing") || strings.Contains(m.Content, "must not") {
			t.Errorf("the refused turn was kept: %+v", m)
		}
	}
}
