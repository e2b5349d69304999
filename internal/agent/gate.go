package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Acting is a Tool that changes something outside the conversation: it
// sends, creates, changes or deletes. The loop runs such a call only when
// the run's Gate allows it; otherwise the call is held for the person.
type Acting interface {
	Acts() bool
}

// Acts reports whether t changes something (Acting and Acts() true).
func Acts(t Tool) bool {
	a, ok := t.(Acting)
	return ok && a.Acts()
}

// Action is an acting call the gate held for the person's decision.
type Action struct {
	// ID names the action for as long as it waits: the same tool with the
	// same arguments has the same ID, so an approval naming it approves
	// exactly that call and nothing else.
	ID string `json:"id"`
	// CallID is the model's call whose result the action's outcome
	// becomes.
	CallID string          `json:"callId,omitempty"`
	Tool   string          `json:"tool"`
	Title  string          `json:"title"`
	Args   json.RawMessage `json:"args"`
	// View is what the action does, read from its arguments, for people.
	View ActionView `json:"view"`
}

// ActionView is an action as a person reads it.
type ActionView struct {
	Recipients []string `json:"recipients,omitempty"`
	Subject    string   `json:"subject,omitempty"`
	Time       string   `json:"time,omitempty"`
	Excerpt    string   `json:"excerpt,omitempty"`
}

// NewAction makes the held action of a call of tool.
func NewAction(callID, tool, title string, args json.RawMessage) Action {
	if title == "" {
		title = tool
	}
	return Action{ID: ActionID(tool, args), CallID: callID, Tool: tool, Title: title, Args: args, View: Describe(args)}
}

// ActionID is the stable id of a call of tool with args: the same for
// the same arguments whatever their key order or spacing.
func ActionID(tool string, args json.RawMessage) string {
	canon := []byte(strings.TrimSpace(string(args)))
	var v any
	if json.Unmarshal(args, &v) == nil {
		canon, _ = json.Marshal(v) // maps marshal with sorted keys
	}
	h := sha256.New()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write(canon)
	return "act_" + hex.EncodeToString(h.Sum(nil))[:16]
}

// Gate decides the acting calls of a run. A run without a Gate runs no
// acting call at all: nothing it reads can make it act unasked.
type Gate struct {
	// Allow reports whether the person has already approved this action
	// (its ID, or an act a task they confirmed names). Nil: none is.
	Allow func(Action) bool
	// Continue keeps the loop going after a call is held (a planning
	// agent plans on with what it read); otherwise a held call ends it.
	Continue bool

	mu   sync.Mutex
	held []Action
}

// Held returns the actions held so far, in the order they were called.
func (g *Gate) Held() []Action {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.held)
}

// check decides an acting call: true when it is held (out is what the
// model reads instead of the tool's result).
func (g *Gate) check(c Call) (out Output, held bool) {
	a := NewAction(c.ID, c.Name, c.Title, c.Args)
	if g == nil {
		return Output{Text: fmt.Sprintf("Not done: %s changes something and this agent cannot ask the person to approve it. Tell the person what you would do instead.", c.Name),
			Summary: "Not run: needs the person's approval"}, true
	}
	if g.Allow != nil && g.Allow(a) {
		return Output{}, false
	}
	g.mu.Lock()
	if !slices.ContainsFunc(g.held, func(h Action) bool { return h.ID == a.ID }) {
		g.held = append(g.held, a)
	}
	g.mu.Unlock()
	data, _ := json.Marshal(map[string]any{"status": "awaiting_confirmation", "actionId": a.ID, "tool": a.Tool, "view": a.View})
	text := "Held, not done: Sova asks the person to approve this exact action first (id " + a.ID + "). Do not call it again."
	if g.Continue {
		text += " Go on with the rest of the work; the person decides about this action after you finish."
	}
	return Output{Text: text, Summary: "Held for your approval", Data: data, Stop: !g.Continue}, true
}

// Field names tools commonly give their arguments, lower case.
var (
	recipientKeys = []string{"to", "cc", "bcc", "recipient", "recipients", "attendees", "attendee", "participants", "guests", "invitees",
		"email", "emails", "address", "addresses", "target", "targets", "path", "paths", "url", "destination", "channel", "user", "users", "phone"}
	// Parts of field names that name whom an action reaches
	// (recipient_email, attendeeList, inviteEmails, …).
	recipientParts = []string{"recipient", "attendee", "invite", "guest", "participant", "mail", "address", "phone", "bcc"}
	subjectKeys    = []string{"subject", "title", "name", "summary", "topic"}
	timeKeys       = []string{"start", "starttime", "start_time", "time", "date", "datetime", "when", "at", "due", "end"}
	bodyKeys       = []string{"body", "text", "content", "message", "description", "note", "html"}
)

// Describe reads an action's recipients, subject, time and a body
// excerpt from its arguments by the field names tools commonly use.
func Describe(args json.RawMessage) ActionView {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return ActionView{Excerpt: clipRunes(strings.TrimSpace(string(args)), 200)}
	}
	var v ActionView
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		lk := strings.ToLower(k)
		switch {
		case slices.Contains(recipientKeys, lk) || slices.ContainsFunc(recipientParts, func(p string) bool { return strings.Contains(lk, p) }):
			for _, s := range stringsIn(m[k]) {
				if !slices.Contains(v.Recipients, s) {
					v.Recipients = append(v.Recipients, s)
				}
			}
		case slices.Contains(subjectKeys, lk) && v.Subject == "":
			v.Subject = clipRunes(strings.Join(stringsIn(m[k]), ", "), 200)
		case slices.Contains(timeKeys, lk) && v.Time == "":
			v.Time = clipRunes(strings.Join(stringsIn(m[k]), ", "), 100)
		case slices.Contains(bodyKeys, lk) && v.Excerpt == "":
			v.Excerpt = clipRunes(strings.Join(stringsIn(m[k]), " "), 200)
		}
	}
	return v
}

// Parties are the recipients, attendees and targets of an action, lower
// case: who or what it reaches. Besides the fields Describe reads, every
// e-mail address in a field other than the body counts, so that an
// address in a field of an unusual name is not missed.
func Parties(args json.RawMessage) []string {
	var out []string
	add := func(s string) {
		if s = strings.ToLower(strings.TrimSpace(s)); s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, r := range Describe(args).Recipients {
		add(r)
	}
	var m map[string]any
	if json.Unmarshal(args, &m) == nil {
		for k, v := range m {
			if slices.Contains(bodyKeys, strings.ToLower(k)) {
				continue
			}
			b, _ := json.Marshal(v)
			for _, addr := range emailRe.FindAllString(string(b), -1) {
				add(addr)
			}
		}
	}
	return out
}

var emailRe = regexp.MustCompile(`[\w.+-]+@[\w-]+(?:\.[\w-]+)+`)

// stringsIn flattens a JSON value into its strings: a string, a list, or
// objects of the form {"email": …, "name": …} (their address first).
func stringsIn(v any) []string {
	switch x := v.(type) {
	case string:
		if s := strings.TrimSpace(x); s != "" {
			return []string{s}
		}
	case float64, bool:
		return []string{fmt.Sprint(x)}
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, stringsIn(e)...)
		}
		return out
	case map[string]any:
		for _, k := range []string{"email", "address", "emailAddress", "id", "name"} {
			if s, ok := x[k].(string); ok && s != "" {
				return []string{s}
			}
		}
	}
	return nil
}

func clipRunes(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
