package realtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/egress"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/limits"
	"github.com/sova-ai/sova/internal/mode/assistant"
)

// errNoRealtime is an endpoint that has no Realtime API.
var errNoRealtime = errors.New("the model endpoint has no Realtime API")

// upstream plays the seed's voice agents on the endpoint's Realtime
// model. The person's audio goes up as it comes; the model's audio and
// transcripts come down to the client; every function call the model
// makes runs here (assistant.Voice): MCP tools (a call that changes
// something held and its question said, run only on an unambiguous yes or
// an approval by id), hand-offs by session.update, the planning agent's
// nextResponse said verbatim. What is said is kept in the chat.
type upstream struct {
	s    *session
	conn *websocket.Conn
	v    *assistant.Voice
	jobs chan func(context.Context)
	wg   sync.WaitGroup

	vad      atomic.Bool // the client wants server VAD (else it commits)
	held     atomic.Bool // actions wait for the person's decision
	deferred atomic.Bool // a response.create came while actions were held
	refused  atomic.Bool // the person's last turn was over their limits

	mu    sync.Mutex
	steps []json.RawMessage
	// usage is the tokens of responses not kept yet: those that only
	// called functions count with the answer that follows them.
	usage  *sova.Usage
	stored bool // the chat exists
}

// dialUpstream opens the upstream session; errNoRealtime when the
// endpoint answers the handshake with anything but a WebSocket.
func dialUpstream(ctx context.Context, s *session) (backend, error) {
	cfg := s.h.cfg.Upstream
	u, err := url.Parse(strings.TrimRight(cfg.BaseURL, "/") + "/realtime")
	if err != nil {
		return nil, fmt.Errorf("the model endpoint's address: %w", err)
	}
	u.Scheme = map[string]string{"https": "wss", "http": "ws"}[u.Scheme]
	u.RawQuery = url.Values{"model": {cfg.Model}}.Encode()
	h := http.Header{}
	if cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	conn, resp, err := websocket.Dial(dctx, u.String(), &websocket.DialOptions{HTTPClient: egress.ServiceClient(0, cfg.BaseURL), HTTPHeader: h})
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols && resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden && resp.StatusCode < 500 {
			return nil, fmt.Errorf("%w (it answered %s)", errNoRealtime, resp.Status)
		}
		return nil, fmt.Errorf("opening the upstream Realtime session: %w", err)
	}
	conn.SetReadLimit(16 << 20)
	up := &upstream{s: s, conn: conn, jobs: make(chan func(context.Context), 64)}
	up.vad.Store(true)
	sink := event.SinkFunc(up.step)
	v, err := s.h.cfg.Assistant.Voice(ctx, s.user.ID, s.chatID, "", sink)
	if err != nil {
		conn.CloseNow()
		return nil, err
	}
	up.v = v
	if err := up.configure(ctx); err != nil {
		v.Close()
		conn.CloseNow()
		return nil, err
	}
	up.wg.Add(2)
	go func() {
		defer up.wg.Done()
		up.read(ctx)
	}()
	go func() {
		defer up.wg.Done()
		// Function calls and decisions, one at a time, in order.
		for {
			select {
			case <-ctx.Done():
				// Jobs queued before the client left still run: what
				// was said is kept; calls upstream fail at once.
				for {
					select {
					case job := <-up.jobs:
						job(ctx)
					default:
						return
					}
				}
			case job := <-up.jobs:
				job(ctx)
			}
		}
	}()
	return up, nil
}

func (u *upstream) close() {
	u.conn.CloseNow()
	u.wg.Wait()
	u.v.Close()
	// A session that ended between a function call and its answer keeps
	// the call's steps and tokens with an empty answer.
	u.mu.Lock()
	left := u.usage != nil || len(u.steps) > 0
	u.mu.Unlock()
	if left {
		u.store(context.Background(), &sova.Message{Role: "assistant", Mode: "assistant", Model: u.s.h.cfg.Upstream.Model, FinishReason: event.FinishCancelled})
	}
}

func (u *upstream) describe() map[string]any {
	d := describeSession(u.s, u.s.h.cfg.Upstream.Voice, u.vad.Load(), "upstream")
	if m, ok := d["sova"].(map[string]any); ok {
		m["agent"] = u.v.Agent()
	}
	return d
}

func (u *upstream) enqueue(ctx context.Context, job func(context.Context)) {
	select {
	case u.jobs <- job: // a free slot wins over an ended session
		return
	default:
	}
	select {
	case u.jobs <- job:
	case <-ctx.Done():
	}
}

// up sends an event to the upstream model.
func (u *upstream) up(ctx context.Context, ev map[string]any) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := u.conn.Write(wctx, websocket.MessageText, b); err != nil {
		return fmt.Errorf("writing to the upstream Realtime session: %w", err)
	}
	return nil
}

// configure gives the model the holding agent: its instructions, its
// functions, the voice, and turn detection (the model does not answer on
// its own while actions are held: Sova reads the answer first).
func (u *upstream) configure(ctx context.Context) error {
	instr, fns := u.v.Setup()
	tools := make([]map[string]any, 0, len(fns))
	for _, f := range fns {
		tools = append(tools, map[string]any{"type": "function", "name": f.Name, "description": f.Description, "parameters": f.Parameters})
	}
	var td any
	if u.vad.Load() {
		td = map[string]any{"type": "server_vad", "create_response": !u.held.Load(), "interrupt_response": true, "silence_duration_ms": silenceMS}
	}
	cfg := u.s.h.cfg.Upstream
	return u.up(ctx, map[string]any{"type": "session.update", "session": map[string]any{
		"type": "realtime", "model": cfg.Model, "instructions": instr, "tools": tools, "tool_choice": "auto",
		"output_modalities": []string{"audio"},
		"audio": map[string]any{
			"input": map[string]any{"format": map[string]any{"type": "audio/pcm", "rate": SampleRate}, "turn_detection": td,
				"transcription": map[string]any{"model": cfg.TranscribeModel}},
			"output": map[string]any{"format": map[string]any{"type": "audio/pcm", "rate": SampleRate}, "voice": u.s.voiceName(cfg.Voice)},
		},
	}})
}

// handle passes the client's events up, keeping Sova's agents in charge
// of instructions and tools.
func (u *upstream) handle(ctx context.Context, ev ClientEvent) {
	s := u.s
	var err error
	switch ev.Type {
	case "session.update":
		if set, on := ev.Session.turnDetection(); set {
			u.vad.Store(on)
		}
		u.enqueue(ctx, func(ctx context.Context) {
			if err := u.configure(ctx); err != nil {
				s.fail(ctx, err)
			}
			s.send(ctx, map[string]any{"type": "session.updated", "session": u.describe()})
		})
		return
	case "input_audio_buffer.append":
		err = u.up(ctx, map[string]any{"type": ev.Type, "audio": ev.Audio})
	case "input_audio_buffer.commit", "input_audio_buffer.clear", "response.cancel":
		err = u.up(ctx, map[string]any{"type": ev.Type})
	case "conversation.item.create":
		if ev.Item.Type != "message" || ev.Item.Role != "user" {
			s.fail(ctx, &ProtocolError{Code: "unsupported_item", Message: "this server runs the agents' functions itself; send the person's messages only", EventID: ev.EventID})
			return
		}
		if !u.admit(ctx) {
			return
		}
		text := ev.Item.text()
		u.enqueue(ctx, func(ctx context.Context) { u.heard(ctx, text, false) })
		return
	case "response.create":
		if u.held.Load() {
			// Sova answers once it has read the person's decision.
			u.deferred.Store(true)
			return
		}
		err = u.up(ctx, map[string]any{"type": "response.create"})
	case "sova.decide":
		approve, decline := ev.Approve, ev.Decline
		u.enqueue(ctx, func(ctx context.Context) { u.decide(ctx, "", approve, decline) })
		return
	}
	if err != nil {
		s.fail(ctx, err)
	}
}

// read takes the model's events: most go to the client as they are (in
// its dialect); transcripts and finished responses are acted on in order.
func (u *upstream) read(ctx context.Context) {
	s := u.s
	for {
		_, b, err := u.conn.Read(ctx)
		if err != nil {
			if ctx.Err() == nil {
				s.h.cfg.Logger.Warn("the upstream Realtime session ended", "err", err)
				s.fail(ctx, errors.New("the voice model's session ended"))
			}
			return
		}
		var ev map[string]any
		if json.Unmarshal(b, &ev) != nil {
			continue
		}
		typ, _ := ev["type"].(string)
		typ = gaName(typ)
		ev["type"] = typ
		delete(ev, "event_id")
		if u.refused.Load() && strings.HasPrefix(typ, "response.") {
			// The answer to a turn over the limits is neither heard nor kept.
			if typ == "response.created" {
				if err := u.up(ctx, map[string]any{"type": "response.cancel"}); err != nil {
					s.fail(ctx, err)
				}
			}
			continue
		}
		switch typ {
		case "input_audio_buffer.committed":
			// The person's turn ended: it is counted before it is answered.
			u.admit(ctx)
		case "session.created", "session.updated":
			continue // the client hears Sova's session
		case "conversation.item.input_audio_transcription.completed":
			text, _ := ev["transcript"].(string)
			s.send(ctx, ev)
			if u.refused.Load() {
				continue
			}
			u.enqueue(ctx, func(ctx context.Context) { u.heard(ctx, text, true) })
			continue
		case "response.done":
			// Queued before the client hears it: a client that hangs up
			// on hearing the answer still finds it in the chat.
			raw, _ := json.Marshal(ev["response"])
			u.enqueue(ctx, func(ctx context.Context) { u.done(ctx, raw) })
			s.send(ctx, ev)
			continue
		}
		s.send(ctx, ev)
	}
}

// admit counts one of the person's turns against their limits; a turn
// over them is refused: the client gets rate_limit_exceeded (or
// limits_unavailable when the count cannot be made), and the model's
// answer to it is cancelled and dropped until a turn is admitted again.
func (u *upstream) admit(ctx context.Context) bool {
	lim, user := u.s.h.cfg.Limiter, u.s.user
	if lim == nil || user.ID == sova.LocalUserID {
		return true
	}
	release, err := lim.Admit(ctx, user, u.s.model)
	if err == nil {
		release() // a turn holds no place under the cap on long runs
		u.refused.Store(false)
		return true
	}
	u.refused.Store(true)
	pe := &ProtocolError{Code: "rate_limit_exceeded", Message: err.Error()}
	if !errors.Is(err, limits.ErrRateLimited) {
		u.s.h.cfg.Logger.Error("counting a voice turn against the limits failed", "user", user.ID, "err", err)
		pe = &ProtocolError{Code: "limits_unavailable", Message: "the usage limits could not be checked; try again shortly"}
	}
	if err := u.up(ctx, map[string]any{"type": "response.cancel"}); err != nil {
		u.s.h.cfg.Logger.Warn("cancelling the answer to a refused turn failed", "err", err)
	}
	u.s.fail(ctx, pe)
	return false
}

// heard is what the person said (spoken, or typed when !spoken): kept in
// the chat; while actions are held it is their answer.
func (u *upstream) heard(ctx context.Context, text string, spoken bool) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	u.v.Heard(text)
	u.store(ctx, &sova.Message{Role: "user", Content: text})
	if !spoken {
		err := u.up(ctx, map[string]any{"type": "conversation.item.create", "item": map[string]any{"type": "message", "role": "user",
			"content": []map[string]any{{"type": "input_text", "text": text}}}})
		if err != nil {
			u.s.fail(ctx, err)
			return
		}
	}
	if u.held.Load() {
		u.decide(ctx, text, nil, nil)
	}
}

// decide applies the person's decision about held actions.
func (u *upstream) decide(ctx context.Context, answer string, approve, decline []string) {
	if !u.held.Load() {
		u.s.fail(ctx, &ProtocolError{Code: "nothing_held", Message: "no action waits for a decision"})
		return
	}
	note, ok := u.v.Decide(ctx, answer, approve, decline)
	if !ok {
		u.say(ctx, u.v.Again())
		return
	}
	u.held.Store(false)
	u.deferred.Store(false)
	err := u.configure(ctx)
	if err == nil {
		err = u.up(ctx, map[string]any{"type": "conversation.item.create", "item": map[string]any{"type": "message", "role": "system",
			"content": []map[string]any{{"type": "input_text", "text": note}}}})
	}
	if err == nil {
		err = u.up(ctx, map[string]any{"type": "response.create"})
	}
	if err != nil {
		u.s.fail(ctx, err)
	}
}

// say has the model say text verbatim.
func (u *upstream) say(ctx context.Context, text string) {
	if err := u.up(ctx, map[string]any{"type": "response.create", "response": map[string]any{
		"instructions": "Say exactly the following to the person, word for word, and nothing else: " + text,
	}}); err != nil {
		u.s.fail(ctx, err)
	}
}

// responseDone is the part of a finished response Sova reads.
type responseDone struct {
	Status string `json:"status"`
	Output []Item `json:"output"`
	Usage  *struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

// done acts on a finished response: what the agent said is kept, its
// function calls run and their outputs go back, and the conversation
// moves to the agent a hand-off names.
func (u *upstream) done(ctx context.Context, raw []byte) {
	var r responseDone
	if err := json.Unmarshal(raw, &r); err != nil {
		return
	}
	agentName := u.v.Agent()
	var said []string
	var calls []Item
	for _, it := range r.Output {
		switch it.Type {
		case "message":
			if t := it.text(); t != "" {
				said = append(said, t)
			}
		case "function_call":
			calls = append(calls, it)
		}
	}
	if r.Usage != nil {
		u.mu.Lock()
		if u.usage == nil {
			u.usage = &sova.Usage{}
		}
		u.usage.InputTokens += r.Usage.InputTokens
		u.usage.OutputTokens += r.Usage.OutputTokens
		u.usage.TotalTokens += r.Usage.TotalTokens
		u.mu.Unlock()
	}
	msg := &sova.Message{Role: "assistant", Content: strings.Join(said, " "), Mode: "assistant", Model: u.s.h.cfg.Upstream.Model}
	if r.Status == "cancelled" {
		// The person spoke over it: the chat shows it was cut off.
		msg.FinishReason = event.FinishCancelled
	}
	if r.Status != "completed" || len(calls) == 0 {
		if msg.Content != "" {
			u.store(ctx, msg)
		}
		if r.Status == "completed" && agentName == assistant.Knowledge && len(said) > 0 {
			// The knowledge agent answered: control returns to the router.
			u.v.ReturnToRouter("answered")
			u.handoff(ctx, assistant.Router)
		}
		return
	}
	next := map[string]any{"type": "response.create"}
	var question, handoff string
	for _, c := range calls {
		res := u.v.Call(ctx, c.CallID, c.Name, json.RawMessage(orEmpty(c.Arguments)))
		if err := u.up(ctx, map[string]any{"type": "conversation.item.create", "item": map[string]any{"type": "function_call_output", "call_id": c.CallID, "output": res.Output}}); err != nil {
			u.s.fail(ctx, err)
			return
		}
		switch {
		case res.Question != "":
			question = res.Question
		case res.Say != "":
			next = map[string]any{"type": "response.create", "response": map[string]any{
				"instructions": "Say the planning agent's answer to the person exactly, word for word, and nothing else: " + res.Say}}
		case res.Handoff != "":
			handoff = res.Handoff
		}
	}
	if msg.Content != "" {
		u.store(ctx, msg)
	}
	// A response that only called functions is not an answer of its own:
	// its steps and tokens are kept with the answer that follows, so the
	// chat has one answer per turn.
	if question != "" {
		u.held.Store(true)
		if err := u.configure(ctx); err != nil {
			u.s.fail(ctx, err)
			return
		}
		u.say(ctx, question)
		return
	}
	if handoff != "" {
		u.handoff(ctx, handoff)
	}
	if err := u.up(ctx, next); err != nil {
		u.s.fail(ctx, err)
	}
}

// handoff gives the model the agent now holding the conversation and
// tells the client.
func (u *upstream) handoff(ctx context.Context, to string) {
	if err := u.configure(ctx); err != nil {
		u.s.fail(ctx, err)
		return
	}
	u.s.send(ctx, map[string]any{"type": "sova.handoff", "agent": to})
	u.s.send(ctx, map[string]any{"type": "session.updated", "session": u.describe()})
}

// step is an event of the agents' tools: shown to the client live and
// kept with the next stored answer.
func (u *upstream) step(e event.Event) {
	b, _ := json.Marshal(e)
	u.mu.Lock()
	u.steps = append(u.steps, b)
	u.mu.Unlock()
	u.s.send(context.Background(), map[string]any{"type": "sova.step", "step": json.RawMessage(b)})
}

// store keeps a message in the session's chat, the chat made at the first.
func (u *upstream) store(ctx context.Context, m *sova.Message) {
	chats := u.s.h.cfg.Chats
	if chats == nil {
		return
	}
	// What the person heard is kept even when they hang up at once: the
	// session's context ends with the client, the write must not.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	u.mu.Lock()
	defer u.mu.Unlock()
	uid := u.s.user.ID
	if !u.stored {
		if _, err := chats.GetChat(ctx, uid, u.s.chatID); errors.Is(err, sova.ErrNotFound) {
			title := "Voice conversation"
			if m.Role == "user" {
				title = clip(m.Content, 60)
			}
			if err := chats.CreateChat(ctx, &sova.Chat{ID: u.s.chatID, UserID: uid, Title: title, Mode: "assistant"}); err != nil {
				u.s.h.cfg.Logger.Error("keeping the voice chat failed", "err", err)
				return
			}
		} else if err != nil {
			u.s.h.cfg.Logger.Error("reading the voice chat failed", "err", err)
			return
		}
		u.stored = true
	}
	m.ChatID = u.s.chatID
	if m.Role == "assistant" {
		rec, _ := json.Marshal(map[string]any{"agent": u.v.Agent(), "voice": true, "events": u.steps})
		m.ToolCalls, u.steps = rec, nil
		m.Usage, u.usage = u.usage, nil
	}
	if err := chats.AddMessage(ctx, uid, m); err != nil {
		u.s.h.cfg.Logger.Error("keeping a voice message failed", "err", err)
	}
}

func orEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return "{}"
	}
	return s
}
