package realtimetest

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// Reply is what the fake Realtime model does on its next response: say
// Text, call a function (Call with Args, sent as given, broken JSON
// included), or, with Echo, say what the response's instructions ask to
// be said word for word (the text after "nothing else: ").
//
// With Pace, the text streams a word every Pace, each word with Pace's
// length of audio, as a voice that speaks in real time: the fake reads
// the client's events meanwhile, and speech its server VAD hears
// (interrupt_response) or a response.cancel cancels the response, which
// ends with status "cancelled" and what was said until then.
type Reply struct {
	Text       string
	Call, Args string
	Echo       bool
	Pace       time.Duration
}

// Session is a session.update the fake received (GA shape).
type Session struct {
	Instructions string `json:"instructions"`
	Tools        []struct {
		Name string `json:"name"`
	} `json:"tools"`
	Audio struct {
		Input struct {
			TurnDetection *struct {
				Type              string `json:"type"`
				CreateResponse    *bool  `json:"create_response"`
				InterruptResponse *bool  `json:"interrupt_response"`
				SilenceDurationMS int    `json:"silence_duration_ms"`
			} `json:"turn_detection"`
		} `json:"input"`
	} `json:"audio"`
}

// Has reports whether the session offers the function name.
func (s Session) Has(name string) bool {
	for _, t := range s.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// Upstream is a fake Realtime API on the Audio server's /v1/realtime: it
// transcribes committed audio with the Audio's scripted transcripts and
// answers each response.create with the next scripted Reply. With
// server_vad turn detection it ends turns itself, as OpenAI does: speech
// starts after 60 ms of 20 ms frames louder than RMS 500 and stops after
// silence_duration_ms (500) of quieter ones; the turn is then committed,
// and answered when create_response is not false.
type Upstream struct {
	a *Audio
	// FirstAudio is waited before a response's first audio delta.
	FirstAudio time.Duration
	// Key, when set, is the API key it requires.
	Key string

	mu       sync.Mutex
	replies  []Reply
	sessions []Session
	outputs  map[string]string // call_id → function output
	notes    []string          // system messages
	models   []string
	frames   int      // input_audio_buffer.append events
	pcm      int      // their PCM bytes
	speeches int      // turns of speech the server VAD heard start
	cancels  []string // why each response was cancelled
}

// Appended is how many input_audio_buffer.append events came, with how
// many bytes of PCM16 in all.
func (u *Upstream) Appended() (frames, bytes int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.frames, u.pcm
}

// SpeechStarts is how many times the server VAD heard speech start.
func (u *Upstream) SpeechStarts() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.speeches
}

// Cancels says why each cancelled response was: "turn_detected" (speech
// heard while it played) or "client_cancelled" (response.cancel).
func (u *Upstream) Cancels() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.cancels...)
}

// NewUpstream adds the Realtime API to a.
func NewUpstream(a *Audio) *Upstream {
	u := &Upstream{a: a, outputs: map[string]string{}}
	a.Handle("GET /v1/realtime", http.HandlerFunc(u.serve))
	return u
}

// Script queues the model's next replies.
func (u *Upstream) Script(r ...Reply) {
	u.mu.Lock()
	u.replies = append(u.replies, r...)
	u.mu.Unlock()
}

// Pending is how many scripted replies are left.
func (u *Upstream) Pending() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.replies)
}

// Sessions are the session updates received, in order.
func (u *Upstream) Sessions() []Session {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]Session(nil), u.sessions...)
}

// Output is the function output given for a call.
func (u *Upstream) Output(callID string) string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.outputs[callID]
}

// Notes are the system messages added to the conversation.
func (u *Upstream) Notes() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.notes...)
}

type conn struct {
	u     *Upstream
	c     *websocket.Conn
	mu    sync.Mutex
	audio int
	vad   *vad // server VAD; nil: the client commits
	auto  bool // server VAD that answers by itself
	barge bool // speech the VAD hears cancels the response playing
	n     atomic.Int64
	// playing is the paced response in progress (read loop only).
	playing *playing
}

// playing is a paced response: stop cancels it, done closes when its
// response.done is sent.
type playing struct {
	stop, done chan struct{}
}

func (u *Upstream) serve(w http.ResponseWriter, r *http.Request) {
	if u.Key != "" && r.Header.Get("Authorization") != "Bearer "+u.Key {
		http.Error(w, `{"error":{"message":"invalid key"}}`, http.StatusUnauthorized)
		return
	}
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	u.mu.Lock()
	u.models = append(u.models, r.URL.Query().Get("model"))
	u.mu.Unlock()
	cn := &conn{u: u, c: c}
	ctx := r.Context()
	cn.send(ctx, map[string]any{"type": "session.created", "session": map[string]any{"type": "realtime", "model": r.URL.Query().Get("model")}})
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			return
		}
		var ev struct {
			Type     string          `json:"type"`
			Audio    string          `json:"audio"`
			Session  json.RawMessage `json:"session"`
			Response struct {
				Instructions string `json:"instructions"`
			} `json:"response"`
			Item struct {
				Type    string `json:"type"`
				Role    string `json:"role"`
				CallID  string `json:"call_id"`
				Output  string `json:"output"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"item"`
		}
		if json.Unmarshal(b, &ev) != nil {
			cn.fail(ctx, "invalid_json", "not JSON")
			continue
		}
		switch ev.Type {
		case "session.update":
			var s Session
			if err := json.Unmarshal(ev.Session, &s); err != nil {
				cn.fail(ctx, "invalid_session", err.Error())
				continue
			}
			u.mu.Lock()
			u.sessions = append(u.sessions, s)
			u.mu.Unlock()
			td := s.Audio.Input.TurnDetection
			cn.auto = td != nil && (td.CreateResponse == nil || *td.CreateResponse)
			cn.barge = td != nil && (td.InterruptResponse == nil || *td.InterruptResponse)
			switch {
			case td == nil || td.Type != "server_vad":
				cn.vad = nil
			case cn.vad == nil:
				cn.vad = &vad{silence: 500}
			}
			if cn.vad != nil && td.SilenceDurationMS > 0 {
				cn.vad.silence = td.SilenceDurationMS
			}
			cn.send(ctx, map[string]any{"type": "session.updated", "session": json.RawMessage(ev.Session)})
		case "input_audio_buffer.append":
			pcm, err := base64.StdEncoding.DecodeString(ev.Audio)
			if err != nil {
				cn.fail(ctx, "invalid_audio", "not base64")
				continue
			}
			cn.audio += len(pcm)
			u.mu.Lock()
			u.frames++
			u.pcm += len(pcm)
			u.mu.Unlock()
			if cn.vad != nil {
				cn.listen(ctx, pcm)
			}
		case "input_audio_buffer.clear":
			cn.audio = 0
		case "input_audio_buffer.commit":
			if cn.audio == 0 {
				cn.fail(ctx, "input_audio_buffer_commit_empty", "buffer empty")
				continue
			}
			cn.audio = 0
			cn.commit(ctx)
		case "conversation.item.create":
			switch ev.Item.Type {
			case "function_call_output":
				u.mu.Lock()
				u.outputs[ev.Item.CallID] = ev.Item.Output
				u.mu.Unlock()
			case "message":
				if ev.Item.Role == "system" && len(ev.Item.Content) > 0 {
					u.mu.Lock()
					u.notes = append(u.notes, ev.Item.Content[0].Text)
					u.mu.Unlock()
				}
			}
			cn.send(ctx, map[string]any{"type": "conversation.item.added", "item": map[string]any{"id": cn.id("item"), "type": ev.Item.Type}})
		case "response.create":
			cn.respond(ctx, ev.Response.Instructions)
		case "response.cancel":
			cn.cancel("client_cancelled")
		default:
			cn.fail(ctx, "unknown_event", ev.Type)
		}
	}
}

func (c *conn) id(p string) string {
	return fmt.Sprintf("%s_%d", p, c.n.Add(1))
}

// listen runs the server VAD over appended audio: speech that starts
// cancels the response playing (interrupt_response), speech that stops
// commits the turn.
func (c *conn) listen(ctx context.Context, pcm []byte) {
	started, stopped := c.vad.feed(pcm)
	at := c.vad.ms
	if started {
		c.u.mu.Lock()
		c.u.speeches++
		c.u.mu.Unlock()
		c.send(ctx, map[string]any{"type": "input_audio_buffer.speech_started", "audio_start_ms": at, "item_id": c.id("item")})
		if c.barge {
			c.cancel("turn_detected")
		}
	}
	if stopped {
		c.send(ctx, map[string]any{"type": "input_audio_buffer.speech_stopped", "audio_end_ms": at})
		c.audio = 0
		c.commit(ctx)
	}
}

// cancel stops the paced response in progress, if any, and waits for its
// response.done.
func (c *conn) cancel(reason string) {
	p := c.playing
	if p == nil {
		return
	}
	select {
	case <-p.done:
		return // it had ended
	default:
	}
	close(p.stop)
	<-p.done
	c.playing = nil
	c.u.mu.Lock()
	c.u.cancels = append(c.u.cancels, reason)
	c.u.mu.Unlock()
}

// vad is the fake's server voice activity detection over PCM16 at 24 kHz.
type vad struct {
	silence     int // ms of quiet that end speech
	speaking    bool
	loud, quiet int
	ms          int // audio heard so far
}

func (v *vad) feed(pcm []byte) (started, stopped bool) {
	const frame = 2 * 24000 * 20 / 1000 // 20 ms
	for i := 0; i+frame <= len(pcm); i += frame {
		v.ms += 20
		var sum float64
		for j := i; j < i+frame; j += 2 {
			x := float64(int16(binary.LittleEndian.Uint16(pcm[j:])))
			sum += x * x
		}
		if math.Sqrt(sum/(frame/2)) > 500 {
			v.loud++
			v.quiet = 0
			if !v.speaking && v.loud >= 3 {
				v.speaking, started = true, true
			}
			continue
		}
		v.loud = 0
		if v.speaking {
			if v.quiet++; v.quiet*20 >= v.silence {
				v.speaking, stopped = false, true
			}
		}
	}
	return started, stopped
}

func (c *conn) send(ctx context.Context, ev map[string]any) {
	b, _ := json.Marshal(ev)
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.c.Write(ctx, websocket.MessageText, b)
}

func (c *conn) fail(ctx context.Context, code, msg string) {
	c.send(ctx, map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "code": code, "message": msg}})
}

func (c *conn) commit(ctx context.Context) {
	a := c.u.a
	item := c.id("item")
	c.send(ctx, map[string]any{"type": "input_audio_buffer.committed", "item_id": item, "previous_item_id": nil})
	c.send(ctx, map[string]any{"type": "conversation.item.added", "item": map[string]any{"id": item, "type": "message", "role": "user",
		"content": []map[string]any{{"type": "input_audio", "transcript": nil}}}})
	a.mu.Lock()
	text := ""
	if len(a.transcripts) > 0 {
		text, a.transcripts = a.transcripts[0], a.transcripts[1:]
	}
	a.mu.Unlock()
	time.Sleep(a.STTLatency)
	c.send(ctx, map[string]any{"type": "conversation.item.input_audio_transcription.completed", "item_id": item, "content_index": 0, "transcript": text})
	if c.auto {
		c.respond(ctx, "")
	}
}

func (c *conn) respond(ctx context.Context, instructions string) {
	u := c.u
	if p := c.playing; p != nil {
		select {
		case <-p.done:
			c.playing = nil
		default:
			c.fail(ctx, "conversation_already_has_active_response", "a response is in progress")
			return
		}
	}
	u.mu.Lock()
	if len(u.replies) == 0 {
		u.mu.Unlock()
		c.fail(ctx, "no_scripted_reply", "the fake model has no reply left")
		return
	}
	r := u.replies[0]
	u.replies = u.replies[1:]
	u.mu.Unlock()
	resp, item := c.id("resp"), c.id("item")
	c.send(ctx, map[string]any{"type": "response.created", "response": map[string]any{"id": resp, "object": "realtime.response", "status": "in_progress", "output": []any{}}})
	if r.Call != "" {
		call := c.id("call")
		it := map[string]any{"id": item, "type": "function_call", "status": "completed", "call_id": call, "name": r.Call, "arguments": r.Args}
		c.send(ctx, map[string]any{"type": "response.output_item.added", "response_id": resp, "output_index": 0, "item": it})
		c.send(ctx, map[string]any{"type": "response.function_call_arguments.delta", "response_id": resp, "item_id": item, "call_id": call, "delta": r.Args})
		c.send(ctx, map[string]any{"type": "response.function_call_arguments.done", "response_id": resp, "item_id": item, "call_id": call, "name": r.Call, "arguments": r.Args})
		c.send(ctx, map[string]any{"type": "response.output_item.done", "response_id": resp, "output_index": 0, "item": it})
		c.send(ctx, map[string]any{"type": "response.done", "response": map[string]any{"id": resp, "status": "completed", "output": []any{it},
			"usage": map[string]any{"input_tokens": 100, "output_tokens": 10, "total_tokens": 110}}})
		return
	}
	text := r.Text
	if r.Echo {
		if _, said, ok := strings.Cut(instructions, "nothing else: "); ok {
			text = said
		}
	}
	c.send(ctx, map[string]any{"type": "response.output_item.added", "response_id": resp, "output_index": 0, "item": map[string]any{"id": item, "type": "message", "role": "assistant", "status": "in_progress"}})
	c.send(ctx, map[string]any{"type": "response.content_part.added", "response_id": resp, "item_id": item, "output_index": 0, "content_index": 0, "part": map[string]any{"type": "audio"}})
	if r.Pace <= 0 {
		c.speak(ctx, resp, item, text, 0, nil)
		return
	}
	p := &playing{stop: make(chan struct{}), done: make(chan struct{})}
	c.playing = p
	go func() {
		defer close(p.done)
		c.speak(ctx, resp, item, text, r.Pace, p.stop)
	}()
}

// speak streams a response's words with their audio (100 ms a word, or
// pace's length a word every pace) and ends it: completed, or cancelled
// with what was said when stop closes first.
func (c *conn) speak(ctx context.Context, resp, item, text string, pace time.Duration, stop <-chan struct{}) {
	wait := func(d time.Duration) bool {
		if d <= 0 {
			return true
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-stop:
			return false
		case <-ctx.Done():
			return false
		}
	}
	n := 4800
	if pace > 0 {
		n = 2 * int(24000*pace.Seconds())
	}
	pcm := base64.StdEncoding.EncodeToString(make([]byte, n))
	said, ok := "", wait(c.u.FirstAudio)
	for _, w := range strings.SplitAfter(text, " ") {
		if !ok {
			break
		}
		said += w
		c.send(ctx, map[string]any{"type": "response.output_audio_transcript.delta", "response_id": resp, "item_id": item, "output_index": 0, "content_index": 0, "delta": w})
		c.send(ctx, map[string]any{"type": "response.output_audio.delta", "response_id": resp, "item_id": item, "output_index": 0, "content_index": 0, "delta": pcm})
		ok = wait(pace)
	}
	status, itemStatus := "completed", "completed"
	if !ok {
		status, itemStatus = "cancelled", "incomplete"
	}
	said = strings.TrimSpace(said)
	c.send(ctx, map[string]any{"type": "response.output_audio.done", "response_id": resp, "item_id": item, "output_index": 0, "content_index": 0})
	c.send(ctx, map[string]any{"type": "response.output_audio_transcript.done", "response_id": resp, "item_id": item, "output_index": 0, "content_index": 0, "transcript": said})
	done := map[string]any{"id": item, "type": "message", "role": "assistant", "status": itemStatus, "content": []map[string]any{{"type": "output_audio", "transcript": said}}}
	c.send(ctx, map[string]any{"type": "response.output_item.done", "response_id": resp, "output_index": 0, "item": done})
	c.send(ctx, map[string]any{"type": "response.done", "response": map[string]any{"id": resp, "status": status, "output": []any{done},
		"usage": map[string]any{"input_tokens": 200, "output_tokens": 40, "total_tokens": 240}}})
}
