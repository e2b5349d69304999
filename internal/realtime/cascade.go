package realtime

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/limits"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/run"
)

// SampleRate is the Realtime API's PCM16 rate, in and out.
const SampleRate = 24000

// cascade answers a session without an upstream Realtime model: each
// committed turn is transcribed (SOVA_STT_MODEL), answered by the mode as
// text through the run service (so the chat is stored as typed messages
// are), and spoken sentence by sentence as the answer streams
// (SOVA_TTS_MODEL), so the first audio plays before the answer ends.
type cascade struct {
	s    *session
	jobs chan func(context.Context)
	wg   sync.WaitGroup

	mu       sync.Mutex
	audio    []byte
	vad      bool
	detector vad
	pending  []string // what the person said or typed, not yet answered
	lastItem string
	cancel   context.CancelFunc // the response under way
}

func newCascade(ctx context.Context, s *session) *cascade {
	c := &cascade{s: s, jobs: make(chan func(context.Context), 16), vad: true}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		// One turn at a time, in the order the events came.
		for {
			select {
			case <-ctx.Done():
				return
			case job := <-c.jobs:
				job(ctx)
			}
		}
	}()
	return c
}

func (c *cascade) close() { c.wg.Wait() }

func (c *cascade) describe() map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return describeSession(c.s, c.s.h.cfg.Voice.Voice(), c.vad, "cascade")
}

// describeSession is the session object of session.created/updated.
func describeSession(s *session, voiceName string, vad bool, path string) map[string]any {
	var td any
	if vad {
		td = map[string]any{"type": "server_vad", "silence_duration_ms": silenceMS}
	}
	d := map[string]any{
		"object": "realtime.session", "id": "sess_" + s.chatID, "model": s.model,
		"instructions": "", "voice": s.voiceName(voiceName), "turn_detection": td,
		"input_audio_format": "pcm16", "output_audio_format": "pcm16",
		"sova": map[string]any{"chat_id": s.chatID, "path": path},
	}
	if Dialect(s.dialect.Load()) == GA {
		d = map[string]any{
			"type": "realtime", "object": "realtime.session", "id": "sess_" + s.chatID, "model": s.model,
			"output_modalities": []string{"audio"},
			"audio": map[string]any{
				"input":  map[string]any{"format": map[string]any{"type": "audio/pcm", "rate": SampleRate}, "turn_detection": td},
				"output": map[string]any{"format": map[string]any{"type": "audio/pcm", "rate": SampleRate}, "voice": s.voiceName(voiceName)},
			},
			"sova": map[string]any{"chat_id": s.chatID, "path": path},
		}
	}
	return d
}

func (c *cascade) enqueue(ctx context.Context, job func(context.Context)) {
	select {
	case c.jobs <- job:
	case <-ctx.Done():
	}
}

func (c *cascade) handle(ctx context.Context, ev ClientEvent) {
	s := c.s
	switch ev.Type {
	case "session.update":
		if set, on := ev.Session.turnDetection(); set {
			c.mu.Lock()
			c.vad = on
			c.mu.Unlock()
		}
		s.send(ctx, map[string]any{"type": "session.updated", "session": c.describe()})
	case "input_audio_buffer.append":
		pcm, _ := base64.StdEncoding.DecodeString(ev.Audio)
		c.mu.Lock()
		if int64(len(c.audio)+len(pcm)) > s.h.cfg.MaxAudioBytes {
			c.mu.Unlock()
			s.fail(ctx, &ProtocolError{Code: "audio_too_long", Message: fmt.Sprintf("the turn's audio is over %d bytes (SOVA_AUDIO_MAX_BYTES); commit or clear the buffer", s.h.cfg.MaxAudioBytes), EventID: ev.EventID})
			return
		}
		c.audio = append(c.audio, pcm...)
		var started, stopped bool
		at := len(c.audio) * 1000 / (2 * SampleRate)
		if c.vad {
			started, stopped = c.detector.feed(pcm)
		}
		interrupt := c.cancel
		c.mu.Unlock()
		if started {
			// The person speaks over the answer: it stops.
			if interrupt != nil {
				interrupt()
			}
			s.send(ctx, map[string]any{"type": "input_audio_buffer.speech_started", "audio_start_ms": at, "item_id": s.id("item")})
		}
		if stopped {
			s.send(ctx, map[string]any{"type": "input_audio_buffer.speech_stopped", "audio_end_ms": at})
			if c.commit(ctx, "") {
				c.enqueue(ctx, func(ctx context.Context) {
					// A turn Sova ended itself is answered only if it was
					// heard: a failed or empty transcription has had its
					// own event, and no client asked for a response.
					c.mu.Lock()
					heard := len(c.pending) > 0
					c.mu.Unlock()
					if heard {
						c.respond(ctx, nil, nil)
					}
				})
			}
		}
	case "input_audio_buffer.commit":
		c.commit(ctx, ev.EventID)
	case "input_audio_buffer.clear":
		c.mu.Lock()
		c.audio, c.detector = nil, vad{}
		c.mu.Unlock()
		s.send(ctx, map[string]any{"type": "input_audio_buffer.cleared"})
	case "conversation.item.create":
		if ev.Item.Type != "message" || ev.Item.Role != "user" {
			s.fail(ctx, &ProtocolError{Code: "unsupported_item", Message: "this server answers the person's messages; it runs its own tools", EventID: ev.EventID})
			return
		}
		text := ev.Item.text()
		item := *ev.Item
		if item.ID == "" {
			item.ID = s.id("item")
		}
		item.Object, item.Status = "realtime.item", "completed"
		c.mu.Lock()
		prev := c.lastItem
		c.lastItem = item.ID
		c.mu.Unlock()
		s.send(ctx, map[string]any{"type": "conversation.item.created", "previous_item_id": nullable(prev), "item": item})
		c.enqueue(ctx, func(context.Context) {
			if text != "" {
				c.mu.Lock()
				c.pending = append(c.pending, text)
				c.mu.Unlock()
			}
		})
	case "response.create":
		c.enqueue(ctx, func(ctx context.Context) { c.respond(ctx, nil, nil) })
	case "sova.decide":
		approve, decline := ev.Approve, ev.Decline
		c.enqueue(ctx, func(ctx context.Context) { c.respond(ctx, approve, decline) })
	case "response.cancel":
		c.mu.Lock()
		if c.cancel != nil {
			c.cancel()
		}
		c.mu.Unlock()
	}
}

// commit ends the person's turn: the buffer becomes a user item and is
// transcribed in order with the other turns. It reports whether there was
// anything to commit.
func (c *cascade) commit(ctx context.Context, eventID string) bool {
	s := c.s
	c.mu.Lock()
	pcm := c.audio
	c.audio, c.detector = nil, vad{}
	prev := c.lastItem
	itemID := s.id("item")
	if len(pcm) > 0 {
		c.lastItem = itemID
	}
	c.mu.Unlock()
	if len(pcm) < 2*SampleRate/10 {
		s.fail(ctx, &ProtocolError{Code: "input_audio_buffer_commit_empty", Message: "the buffer holds less than 100 ms of audio", EventID: eventID})
		return false
	}
	s.send(ctx, map[string]any{"type": "input_audio_buffer.committed", "previous_item_id": nullable(prev), "item_id": itemID})
	s.send(ctx, map[string]any{"type": "conversation.item.created", "previous_item_id": nullable(prev), "item": Item{
		ID: itemID, Object: "realtime.item", Type: "message", Status: "completed", Role: "user",
		Content: []Content{{Type: "input_audio", Transcript: nil}},
	}})
	c.enqueue(ctx, func(ctx context.Context) {
		if !s.h.cfg.Voice.CanTranscribe() {
			s.send(ctx, map[string]any{"type": "conversation.item.input_audio_transcription.failed", "item_id": itemID, "content_index": 0,
				"error": map[string]any{"type": "invalid_request_error", "code": "not_configured", "message": "speech recognition is off: set SOVA_STT_MODEL"}})
			return
		}
		text, err := s.h.cfg.Voice.Transcribe(ctx, "speech.wav", "audio/wav", bytes.NewReader(wav(pcm)))
		if err != nil {
			s.h.cfg.Logger.Error("transcription failed", "err", err)
			s.send(ctx, map[string]any{"type": "conversation.item.input_audio_transcription.failed", "item_id": itemID, "content_index": 0,
				"error": map[string]any{"type": "server_error", "code": "transcription_failed", "message": err.Error()}})
			return
		}
		s.send(ctx, map[string]any{"type": "conversation.item.input_audio_transcription.completed", "item_id": itemID, "content_index": 0, "transcript": text})
		if text != "" {
			c.mu.Lock()
			c.pending = append(c.pending, text)
			c.mu.Unlock()
		}
	})
	return true
}

// respond answers what the person said since the last answer (or their
// decision about held actions) with the mode, through the run service,
// speaking the answer sentence by sentence.
func (c *cascade) respond(parent context.Context, approve, decline []string) {
	s := c.s
	c.mu.Lock()
	text := strings.Join(c.pending, "\n")
	c.pending = nil
	ctx, cancel := context.WithCancel(parent)
	c.cancel = cancel
	prev := c.lastItem
	c.mu.Unlock()
	defer func() {
		cancel()
		c.mu.Lock()
		c.cancel = nil
		c.mu.Unlock()
	}()
	if text == "" && len(approve)+len(decline) == 0 {
		s.fail(parent, &ProtocolError{Code: "nothing_to_answer", Message: "no transcribed speech or message to answer yet"})
		return
	}
	respID, itemID := s.id("resp"), s.id("item")
	c.mu.Lock()
	c.lastItem = itemID
	c.mu.Unlock()
	item := Item{ID: itemID, Object: "realtime.item", Type: "message", Status: "in_progress", Role: "assistant", Content: []Content{}}
	s.send(parent, map[string]any{"type": "response.created", "response": map[string]any{"object": "realtime.response", "id": respID, "status": "in_progress", "output": []any{}}})
	s.send(parent, map[string]any{"type": "response.output_item.added", "response_id": respID, "output_index": 0, "item": item})
	s.send(parent, map[string]any{"type": "conversation.item.created", "previous_item_id": nullable(prev), "item": item})
	speak := s.h.cfg.Voice.CanSpeak()
	part := "audio"
	if !speak {
		part = "text"
	}
	s.send(parent, map[string]any{"type": "response.content_part.added", "response_id": respID, "item_id": itemID, "output_index": 0, "content_index": 0, "part": map[string]any{"type": part}})

	out := &speaker{s: s, respID: respID, itemID: itemID, speak: speak}
	sentences := make(chan string, 64)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		out.run(ctx, sentences)
	}()
	var (
		split   splitter
		usage   *sova.Usage
		failure error
	)
	msgs := []llm.Message{}
	if text != "" {
		msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: text})
	}
	prep, err := s.h.cfg.Runs.Prepare(ctx, run.Request{ChatID: s.chatID, Mode: s.model, Messages: msgs, Persist: true, Approve: approve, Decline: decline})
	if err == nil {
		s.h.cfg.Runs.Start(prep)
		err = s.h.cfg.Runs.Follow(ctx, prep.RunID, prep.StartSeq(), func(e event.Event) error {
			switch e.Type {
			case event.TypeTextDelta:
				for _, sentence := range split.add(e.Text) {
					select {
					case sentences <- sentence:
					case <-ctx.Done():
						return ctx.Err()
					}
				}
			case event.TypeUsage:
				usage = e.Usage
			case event.TypeError:
				failure = errors.New(e.Error.Message)
			case event.TypeToolCall, event.TypeToolResult, event.TypeData:
				// The steps shown live: tool calls, hand-offs, a held action.
				b, _ := json.Marshal(e)
				s.send(parent, map[string]any{"type": "sova.step", "response_id": respID, "step": json.RawMessage(b)})
			}
			return nil
		})
	}
	if last := split.flush(); last != "" && ctx.Err() == nil {
		sentences <- last
	}
	close(sentences)
	wg.Wait()
	status := "completed"
	switch {
	case ctx.Err() != nil && parent.Err() == nil:
		status = "cancelled"
	case err != nil || failure != nil:
		status = "failed"
		if failure == nil {
			failure = err
		}
		var ex *limits.Exceeded
		pe := &ProtocolError{Code: "response_failed", Message: failure.Error()}
		if errors.As(failure, &ex) {
			pe.Code = "rate_limit_exceeded"
		}
		s.fail(parent, pe)
	}
	transcript := out.transcript.String()
	if speak {
		s.send(parent, map[string]any{"type": "response.output_audio.done", "response_id": respID, "item_id": itemID, "output_index": 0, "content_index": 0})
		s.send(parent, map[string]any{"type": "response.output_audio_transcript.done", "response_id": respID, "item_id": itemID, "output_index": 0, "content_index": 0, "transcript": transcript})
	} else {
		s.send(parent, map[string]any{"type": "response.output_text.done", "response_id": respID, "item_id": itemID, "output_index": 0, "content_index": 0, "text": transcript})
	}
	item.Status = "completed"
	if status != "completed" {
		item.Status = "incomplete"
	}
	tr := transcript
	item.Content = []Content{{Type: map[bool]string{true: "output_audio", false: "output_text"}[speak], Transcript: &tr}}
	s.send(parent, map[string]any{"type": "response.content_part.done", "response_id": respID, "item_id": itemID, "output_index": 0, "content_index": 0, "part": item.Content[0]})
	s.send(parent, map[string]any{"type": "response.output_item.done", "response_id": respID, "output_index": 0, "item": item})
	resp := map[string]any{"object": "realtime.response", "id": respID, "status": status, "output": []any{item}}
	if usage != nil {
		resp["usage"] = map[string]any{"input_tokens": usage.InputTokens, "output_tokens": usage.OutputTokens, "total_tokens": usage.InputTokens + usage.OutputTokens}
	}
	s.send(parent, map[string]any{"type": "response.done", "response": resp})
}

// speaker speaks an answer's sentences in order: each is cleaned of what
// is not said aloud, its transcript sent, then its audio as it arrives.
type speaker struct {
	s              *session
	respID, itemID string
	speak          bool
	transcript     strings.Builder
}

// chunk is how much PCM one audio delta carries: 100 ms.
const chunk = 2 * SampleRate / 10

func (p *speaker) run(ctx context.Context, sentences <-chan string) {
	for sentence := range sentences {
		said := Speakable(sentence)
		if said == "" || ctx.Err() != nil {
			continue
		}
		if p.transcript.Len() > 0 {
			said = " " + said
		}
		p.transcript.WriteString(said)
		base := map[string]any{"response_id": p.respID, "item_id": p.itemID, "output_index": 0, "content_index": 0, "delta": said}
		if !p.speak {
			base["type"] = "response.output_text.delta"
			p.s.send(ctx, base)
			continue
		}
		base["type"] = "response.output_audio_transcript.delta"
		p.s.send(ctx, base)
		if err := p.say(ctx, said); err != nil && ctx.Err() == nil {
			p.s.h.cfg.Logger.Error("speech failed", "err", err)
			p.s.fail(ctx, &ProtocolError{Code: "speech_failed", Message: err.Error()})
		}
	}
}

func (p *speaker) say(ctx context.Context, text string) error {
	audio, _, err := p.s.h.cfg.Voice.SpeakAs(ctx, strings.TrimSpace(text), "pcm")
	if err != nil {
		return err
	}
	defer audio.Close()
	buf := make([]byte, chunk)
	for {
		n, err := io.ReadFull(audio, buf)
		if n > 0 {
			p.s.send(ctx, map[string]any{"type": "response.output_audio.delta", "response_id": p.respID, "item_id": p.itemID,
				"output_index": 0, "content_index": 0, "delta": base64.StdEncoding.EncodeToString(buf[:n])})
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading speech: %w", err)
		}
	}
}

// vad is the cascade's server voice activity detection: speech starts
// after 60 ms of frames louder than the threshold and stops after
// silenceMS of quiet ones.
type vad struct {
	speaking    bool
	loud, quiet int
}

const (
	silenceMS  = 500
	frameMS    = 20
	vadRMS     = 500.0
	startFrame = 3
)

// feed takes PCM16 and reports whether speech started or stopped in it.
func (v *vad) feed(pcm []byte) (started, stopped bool) {
	const frame = 2 * SampleRate * frameMS / 1000
	for i := 0; i+frame <= len(pcm); i += frame {
		var sum float64
		for j := i; j < i+frame; j += 2 {
			x := float64(int16(binary.LittleEndian.Uint16(pcm[j:])))
			sum += x * x
		}
		loud := math.Sqrt(sum/(frame/2)) > vadRMS
		switch {
		case loud:
			v.loud++
			v.quiet = 0
			if !v.speaking && v.loud >= startFrame {
				v.speaking, started = true, true
			}
		default:
			v.loud = 0
			if v.speaking {
				if v.quiet++; v.quiet*frameMS >= silenceMS {
					v.speaking, stopped = false, true
				}
			}
		}
	}
	return started, stopped
}

// wav wraps PCM16 mono at SampleRate in a WAV header, what the
// transcription endpoint reads.
func wav(pcm []byte) []byte {
	var b bytes.Buffer
	b.WriteString("RIFF")
	_ = binary.Write(&b, binary.LittleEndian, uint32(36+len(pcm)))
	b.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(SampleRate), uint32(2 * SampleRate), uint16(2), uint16(16)} {
		_ = binary.Write(&b, binary.LittleEndian, v)
	}
	b.WriteString("data")
	_ = binary.Write(&b, binary.LittleEndian, uint32(len(pcm)))
	b.Write(pcm)
	return b.Bytes()
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
