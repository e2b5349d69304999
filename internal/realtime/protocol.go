package realtime

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// Dialect is the version of the Realtime protocol a client speaks: the
// generally available one (GA) or the beta one the first Realtime models'
// clients send (OpenAI-Beta: realtime=v1). They differ in a few server
// event names and in the shape of session.update.
type Dialect int

const (
	GA Dialect = iota
	Beta
)

// gaToBeta renames the server events whose names changed at GA.
var gaToBeta = map[string]string{
	"response.output_audio.delta":            "response.audio.delta",
	"response.output_audio.done":             "response.audio.done",
	"response.output_audio_transcript.delta": "response.audio_transcript.delta",
	"response.output_audio_transcript.done":  "response.audio_transcript.done",
	"response.output_text.delta":             "response.text.delta",
	"response.output_text.done":              "response.text.done",
	"conversation.item.added":                "conversation.item.created",
}

// betaToGA is gaToBeta the other way, for upstream events.
var betaToGA = func() map[string]string {
	m := map[string]string{}
	for ga, beta := range gaToBeta {
		if ga != "conversation.item.added" {
			m[beta] = ga
		}
	}
	return m
}()

// eventName is a server event's name (given in GA form) in dialect d.
func eventName(d Dialect, ga string) string {
	if d == Beta {
		if b, ok := gaToBeta[ga]; ok {
			return b
		}
	}
	return ga
}

// gaName is the GA name of an event named in either dialect.
func gaName(name string) string {
	if g, ok := betaToGA[name]; ok {
		return g
	}
	return name
}

// ClientEvent is one event a client sends: the fields of every kind Sova
// reads, by type.
type ClientEvent struct {
	Type    string `json:"type"`
	EventID string `json:"event_id,omitempty"`
	// input_audio_buffer.append: base64 PCM16, 24 kHz, mono.
	Audio string `json:"audio,omitempty"`
	// session.update
	Session *SessionConfig `json:"session,omitempty"`
	// conversation.item.create
	PreviousItemID string `json:"previous_item_id,omitempty"`
	Item           *Item  `json:"item,omitempty"`
	// response.create (optional overrides, read for instructions only)
	Response json.RawMessage `json:"response,omitempty"`
	// sova.decide: Sova's extension, the decision about held actions by
	// id, like approve/decline of the chat endpoints.
	Approve []string `json:"approve,omitempty"`
	Decline []string `json:"decline,omitempty"`
}

// SessionConfig is the part of session.update Sova reads, in either
// dialect: GA nests voice and turn detection under audio, beta has them
// at the top.
type SessionConfig struct {
	Type         string          `json:"type,omitempty"` // GA: "realtime"
	Model        string          `json:"model,omitempty"`
	Instructions string          `json:"instructions,omitempty"`
	Voice        string          `json:"voice,omitempty"`      // beta
	Modalities   []string        `json:"modalities,omitempty"` // beta
	Output       []string        `json:"output_modalities,omitempty"`
	TurnDetect   json.RawMessage `json:"turn_detection,omitempty"` // beta
	Audio        *struct {
		Input *struct {
			TurnDetection json.RawMessage `json:"turn_detection,omitempty"`
		} `json:"input,omitempty"`
		Output *struct {
			Voice string `json:"voice,omitempty"`
		} `json:"output,omitempty"`
	} `json:"audio,omitempty"`
}

// dialect is what the update says about its client's dialect: GA sets
// type "realtime"; beta's top-level voice or modalities give it away.
func (s *SessionConfig) dialect(current Dialect) Dialect {
	switch {
	case s.Type == "realtime":
		return GA
	case s.Type == "" && (len(s.Modalities) > 0 || s.Voice != ""):
		return Beta
	}
	return current
}

// voice is the voice the update asks for ("" none).
func (s *SessionConfig) voice() string {
	if s.Audio != nil && s.Audio.Output != nil && s.Audio.Output.Voice != "" {
		return s.Audio.Output.Voice
	}
	return s.Voice
}

// turnDetection reports whether the update sets turn detection and, if so,
// whether it is server VAD (null turns it off: the client commits).
func (s *SessionConfig) turnDetection() (set, serverVAD bool) {
	raw := s.TurnDetect
	if s.Audio != nil && s.Audio.Input != nil && s.Audio.Input.TurnDetection != nil {
		raw = s.Audio.Input.TurnDetection
	}
	if raw == nil {
		return false, false
	}
	if strings.TrimSpace(string(raw)) == "null" {
		return true, false
	}
	var td struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(raw, &td)
	return true, td.Type == "server_vad" || td.Type == "semantic_vad"
}

// Item is a conversation item.
type Item struct {
	ID        string    `json:"id,omitempty"`
	Object    string    `json:"object,omitempty"`
	Type      string    `json:"type"` // message, function_call, function_call_output
	Status    string    `json:"status,omitempty"`
	Role      string    `json:"role,omitempty"`
	Content   []Content `json:"content,omitempty"`
	CallID    string    `json:"call_id,omitempty"`
	Name      string    `json:"name,omitempty"`
	Arguments string    `json:"arguments,omitempty"`
	Output    string    `json:"output,omitempty"`
}

// Content is a part of a message item.
type Content struct {
	Type       string  `json:"type"` // input_text, input_audio, text, output_text, audio, output_audio
	Text       string  `json:"text,omitempty"`
	Audio      string  `json:"audio,omitempty"`
	Transcript *string `json:"transcript,omitempty"`
}

// text is what a message item says, typed or transcribed.
func (it *Item) text() string {
	var b strings.Builder
	for _, c := range it.Content {
		s := c.Text
		if s == "" && c.Transcript != nil {
			s = *c.Transcript
		}
		if s = strings.TrimSpace(s); s != "" {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(s)
		}
	}
	return b.String()
}

// Client event types Sova understands.
var clientTypes = map[string]bool{
	"session.update": true, "input_audio_buffer.append": true, "input_audio_buffer.commit": true,
	"input_audio_buffer.clear": true, "conversation.item.create": true, "response.create": true,
	"response.cancel": true, "sova.decide": true,
}

// ProtocolError is a client event Sova refuses: sent back as an error
// event, the session goes on.
type ProtocolError struct {
	Code, Message, EventID string
}

func (e *ProtocolError) Error() string { return e.Code + ": " + e.Message }

// ParseClientEvent reads and checks one client event.
func ParseClientEvent(b []byte) (ClientEvent, error) {
	var ev ClientEvent
	if err := json.Unmarshal(b, &ev); err != nil {
		return ev, &ProtocolError{Code: "invalid_json", Message: "the event is not JSON: " + err.Error()}
	}
	bad := func(code, msg string) (ClientEvent, error) {
		return ev, &ProtocolError{Code: code, Message: msg, EventID: ev.EventID}
	}
	if ev.Type == "" {
		return bad("missing_type", "the event has no type")
	}
	if !clientTypes[ev.Type] {
		return bad("unknown_event", fmt.Sprintf("unknown event type %q", clip(ev.Type, 60)))
	}
	switch ev.Type {
	case "input_audio_buffer.append":
		if ev.Audio == "" {
			return bad("invalid_audio", "input_audio_buffer.append needs audio (base64 PCM16)")
		}
		if _, err := base64.StdEncoding.DecodeString(ev.Audio); err != nil {
			return bad("invalid_audio", "audio is not base64")
		}
	case "session.update":
		if ev.Session == nil {
			return bad("missing_session", "session.update needs a session")
		}
	case "conversation.item.create":
		if ev.Item == nil {
			return bad("missing_item", "conversation.item.create needs an item")
		}
		switch ev.Item.Type {
		case "message":
			if ev.Item.Role != "user" && ev.Item.Role != "system" && ev.Item.Role != "assistant" {
				return bad("invalid_item", "a message item's role is user, assistant or system")
			}
		case "function_call_output":
			if ev.Item.CallID == "" {
				return bad("invalid_item", "a function_call_output item needs call_id")
			}
		case "function_call":
		default:
			return bad("invalid_item", fmt.Sprintf("unknown item type %q", clip(ev.Item.Type, 40)))
		}
	}
	return ev, nil
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
