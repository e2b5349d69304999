package llm

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// StructuredOption tunes Structured.
type StructuredOption func(*structuredOptions)

type structuredOptions struct {
	deltas func(attempt int, delta string)
	name   string
	schema *jsonschema.Schema
}

// WithStreamDeltas streams each attempt and passes the raw JSON text of
// its reply to fn as it arrives. attempt counts from 1 and grows with each
// re-ask, so a live view can start over when it changes.
func WithStreamDeltas(fn func(attempt int, delta string)) StructuredOption {
	return func(o *structuredOptions) { o.deltas = fn }
}

// WithSchemaName sets the schema name sent with json_schema (default: the
// Go type's name).
func WithSchemaName(name string) StructuredOption {
	return func(o *structuredOptions) { o.name = name }
}

// WithSchema sends and validates against s instead of the schema derived
// from T; the reply is still decoded into T (and checked by its Validate
// method). It serves replies whose shape changes from call to call, such as
// an agent's choice among the tools allowed at its current step, which Go
// types cannot express. s is not modified.
func WithSchema(s *jsonschema.Schema) StructuredOption {
	return func(o *structuredOptions) { o.schema = s }
}

// formatMode is how structured output is requested from a model, from the
// best supported to the most basic. An endpoint that rejects one mode is
// remembered (per model) and asked with the next.
type formatMode int

const (
	formatSchema formatMode = iota // response_format json_schema, strict
	formatObject                   // response_format json_object + schema in the system prompt
	formatText                     // no response_format; JSON extracted from the text
)

func (m formatMode) String() string {
	switch m {
	case formatSchema:
		return FormatJSONSchema
	case formatObject:
		return FormatJSONObject
	default:
		return "text"
	}
}

// Structured asks for a reply that is a JSON object matching T's schema
// (derived with jsonschema.For; T must be a struct) and decodes it.
//
// A reply that is not valid JSON is repaired where it can be before
// anything else: Markdown fences and prose around the object, a cut-off
// tail (open strings, arrays and objects closed, a member cut off dropped),
// trailing commas, single-quoted strings, Python's True/False/None. The
// reply is validated against the schema and, if T or *T has a
// Validate() error method, by it. An invalid reply is answered with a user
// message quoting the problem, up to MaxStructuredRetries times. Endpoints
// that reject json_schema (or json_object) are detected from their 400/422
// answer, remembered per model, and asked with the next simpler mode; a
// reply that is not bare JSON has the first JSON object extracted from it.
//
// The returned Response is the accepted reply (or the last one on error);
// its Usage covers that call only, while a Meter in ctx records every call.
func Structured[T any](ctx context.Context, c *Client, req Request, opts ...StructuredOption) (T, *Response, error) {
	var zero T
	var o structuredOptions
	for _, opt := range opts {
		opt(&o)
	}
	var sch *schemaInfo
	var err error
	if o.schema != nil {
		name := cmp.Or(o.name, reflect.TypeFor[T]().Name())
		if sch, err = newSchemaInfo(o.schema, name); err != nil {
			err = fmt.Errorf("llm: schema %q: %w", name, err)
		}
	} else {
		sch, err = schemaFor[T](c.core, o.name)
	}
	if err != nil {
		return zero, nil, err
	}
	model := cmp.Or(req.Model, c.model)
	tries := c.core.cfg.MaxStructuredRetries + 1
	base := slices.Clone(req.Messages)
	var (
		followUps []Message
		last      *Response
		lastErr   error
	)
	for attempt := 1; attempt <= tries; {
		mode := c.core.formatMode(model)
		r := req
		r.Messages = sch.messages(mode, base, followUps)
		r.ResponseFormat = sch.format(mode)
		var resp *Response
		if o.deltas != nil {
			n := attempt
			resp, err = c.Stream(ctx, r, func(d string) { o.deltas(n, d) })
		} else {
			resp, err = c.Complete(ctx, r)
		}
		if err != nil {
			if c.core.downgradeFormat(model, mode, err) {
				continue // same attempt, simpler mode
			}
			return zero, last, fmt.Errorf("structured output %q: %w", sch.name, err)
		}
		last = resp
		if resp.Refusal != "" && strings.TrimSpace(resp.Content) == "" {
			return zero, resp, fmt.Errorf("structured output %q: model %s refused: %s", sch.name, model, resp.Refusal)
		}
		v, verr := decodeStructured[T](resp.Content, sch)
		if verr == nil {
			return v, resp, nil
		}
		lastErr = verr
		c.core.log.DebugContext(ctx, "structured reply rejected", "model", model, "schema", sch.name, "attempt", attempt, "mode", mode.String(), "error", verr)
		followUps = append(followUps,
			Message{Role: RoleAssistant, Content: resp.Content},
			Message{Role: RoleUser, Content: reask(verr, resp.FinishReason)},
		)
		attempt++
	}
	return zero, last, fmt.Errorf("structured output %q from model %s: no valid reply after %d attempts: %w", sch.name, model, tries, lastErr)
}

// reask is the user message sent after an unusable structured reply.
func reask(err error, finish string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Your previous reply could not be used: %v.", err)
	if finish == "length" {
		b.WriteString(" It was cut off by the length limit, so keep it shorter.")
	}
	b.WriteString("\nReply again with only the corrected JSON object: no prose, no Markdown code fences.")
	return b.String()
}

// decodeStructured parses, validates and decodes one reply. A reply that
// is not bare JSON is read two ways: the first complete object found in it
// (a fenced or quoted object) and the reply repaired (repairJSON); the
// first that validates is taken. The repair matters when the extracted
// object is only a nested one, as in a reply whose outer object was cut
// off.
func decodeStructured[T any](content string, sch *schemaInfo) (T, error) {
	var out T
	text := strings.TrimSpace(content)
	if text == "" {
		return out, errors.New("the reply was empty; a JSON object was expected")
	}
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		var candidates []string
		if obj, ok := extractJSONObject(content); ok {
			candidates = append(candidates, obj)
		}
		if obj, ok := repairJSON(content); ok && (len(candidates) == 0 || obj != compactJSON(candidates[0])) {
			candidates = append(candidates, obj)
		}
		if len(candidates) == 0 {
			return out, fmt.Errorf("the reply is not a JSON object (%v)", err)
		}
		// The longest reading is the one the model meant; its error is
		// the one to tell it.
		var firstErr error
		longest := -1
		for _, c := range candidates {
			v, err := validateStructured[T](c, sch)
			if err == nil {
				return v, nil
			}
			if len(c) > longest {
				firstErr, longest = err, len(c)
			}
		}
		return out, firstErr
	}
	if _, ok := v.(map[string]any); !ok {
		if obj, found := extractJSONObject(text); found && obj != text {
			text = obj
		}
	}
	return validateStructured[T](text, sch)
}

// compactJSON is valid JSON text without insignificant space.
func compactJSON(s string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(s)) != nil {
		return s
	}
	return b.String()
}

// validateStructured checks a JSON text against the schema and T's
// Validate method and decodes it.
func validateStructured[T any](text string, sch *schemaInfo) (T, error) {
	var out T
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return out, fmt.Errorf("the reply is not a JSON object (%v)", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return out, errors.New("the reply is JSON but not an object")
	}
	mapped := false
	v = looseEnums(sch.schema, v, &mapped)
	if err := sch.resolved.Validate(v); err != nil {
		return out, fmt.Errorf("the JSON does not match the schema: %w", err)
	}
	if mapped {
		// Re-encoded only then: numbers read as float64 could lose digits.
		if b, err := json.Marshal(v); err == nil {
			text = string(b)
		}
	}
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		return out, fmt.Errorf("the JSON does not fit the expected fields: %w", err)
	}
	if val, ok := any(&out).(interface{ Validate() error }); ok {
		if err := val.Validate(); err != nil {
			return out, fmt.Errorf("the values are not acceptable: %w", err)
		}
	}
	return out, nil
}

// formatMode is the structured-output mode to use for model.
func (k *core) formatMode(model string) formatMode {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.caps[model].format
}

// downgradeFormat records that the endpoint rejected mode for model and
// reports whether there is a simpler mode to try.
func (k *core) downgradeFormat(model string, mode formatMode, err error) bool {
	if mode >= formatText || !rejectsFormat(err, mode) {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	caps := k.caps[model]
	if caps.format <= mode {
		caps.format = mode + 1
		k.caps[model] = caps
		k.log.Info("endpoint rejected response format; using a simpler one for this model",
			"model", model, "rejected", mode.String(), "now", caps.format.String())
	}
	return true
}

// rejectsFormat recognises a 400/422 answer that says the endpoint does not
// support the requested response_format. Answers about an invalid schema
// are not capability problems and are returned to the caller instead.
func rejectsFormat(err error, mode formatMode) bool {
	var ae *APIError
	if !errors.As(err, &ae) {
		return false
	}
	if ae.StatusCode != http.StatusBadRequest && ae.StatusCode != http.StatusUnprocessableEntity {
		return false
	}
	text := strings.ToLower(strings.Join([]string{ae.Message, ae.Param, ae.Code, ae.Type, ae.body}, " "))
	if strings.Contains(text, "invalid schema") {
		return false
	}
	keys := []string{"response_format", "response format"}
	switch mode {
	case formatSchema:
		keys = append(keys, "json_schema", "structured output", "guided")
	case formatObject:
		keys = append(keys, "json_object", "json mode")
	}
	for _, key := range keys {
		if strings.Contains(text, key) {
			return true
		}
	}
	return false
}

type schemaKey struct {
	t    reflect.Type
	name string
}

// schemaInfo is everything Structured needs about T's schema, computed
// once per Client.
type schemaInfo struct {
	name     string
	raw      json.RawMessage // strict-mode schema, properties in field order
	strict   map[string]any
	text     string // the plain schema, for prompts
	schema   *jsonschema.Schema
	resolved *jsonschema.Resolved
}

func schemaFor[T any](k *core, name string) (*schemaInfo, error) {
	t := reflect.TypeFor[T]()
	key := schemaKey{t: t, name: name}
	k.mu.Lock()
	info, ok := k.schemas[key]
	k.mu.Unlock()
	if ok {
		return info, nil
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("llm: structured output needs a struct type, got %s", t)
	}
	s, err := jsonschema.For[T](nil)
	if err != nil {
		return nil, fmt.Errorf("llm: schema for %s: %w", t, err)
	}
	applyEnums(t, s)
	info, err = newSchemaInfo(s, cmp.Or(name, t.Name()))
	if err != nil {
		return nil, fmt.Errorf("llm: schema for %s: %w", t, err)
	}
	k.mu.Lock()
	k.schemas[key] = info
	k.mu.Unlock()
	return info, nil
}

// newSchemaInfo prepares s for Structured: the strict variant that is sent,
// the plain one for prompts, and the resolved one that replies are
// validated against. s itself is left as it is.
func newSchemaInfo(s *jsonschema.Schema, name string) (*schemaInfo, error) {
	strict := s.CloneSchemas()
	makeStrict(strict)
	resolved, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("resolving: %w", err)
	}
	raw, err := json.Marshal(strict)
	if err != nil {
		return nil, fmt.Errorf("encoding: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	plain, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encoding: %w", err)
	}
	return &schemaInfo{
		name:     schemaName(name),
		raw:      raw,
		strict:   m,
		text:     string(plain),
		schema:   s.CloneSchemas(),
		resolved: resolved,
	}, nil
}

// makeStrict adapts a schema to OpenAI's strict mode: every object lists
// all its properties as required and forbids others. Optional fields thus
// become required for the model; validation still uses the original schema,
// so a reply from a non-strict endpoint may omit them.
func makeStrict(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Properties) > 0 {
		req := make([]string, 0, len(s.Properties))
		for _, p := range s.PropertyOrder {
			if _, ok := s.Properties[p]; ok && !slices.Contains(req, p) {
				req = append(req, p)
			}
		}
		var rest []string
		for p := range s.Properties {
			if !slices.Contains(req, p) {
				rest = append(rest, p)
			}
		}
		slices.Sort(rest)
		s.Required = append(req, rest...)
		s.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
	} else if s.AdditionalProperties != nil && s.AdditionalProperties.Not == nil {
		makeStrict(s.AdditionalProperties)
	}
	for _, p := range s.Properties {
		makeStrict(p)
	}
	makeStrict(s.Items)
	for _, list := range [][]*jsonschema.Schema{s.PrefixItems, s.AnyOf, s.OneOf, s.AllOf} {
		for _, sub := range list {
			makeStrict(sub)
		}
	}
	for _, sub := range s.Defs {
		makeStrict(sub)
	}
	for _, sub := range s.Definitions {
		makeStrict(sub)
	}
}

// schemaName makes name acceptable to OpenAI (^[a-zA-Z0-9_-]{1,64}$).
func schemaName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	s := strings.Trim(string(b), "_")
	if len(s) > 64 {
		s = s[:64]
	}
	if s == "" {
		return "response"
	}
	return s
}

func (s *schemaInfo) format(mode formatMode) *ResponseFormat {
	switch mode {
	case formatSchema:
		return &ResponseFormat{Type: FormatJSONSchema, Name: s.name, Schema: s.strict, RawSchema: s.raw, Strict: true}
	case formatObject:
		return &ResponseFormat{Type: FormatJSONObject}
	}
	return nil
}

// messages builds the messages for one attempt. Without json_schema the
// schema goes into the system prompt; it is appended to the first system
// message rather than sent as a second one, because the chat templates of
// many local models accept only one system message, at the start.
func (s *schemaInfo) messages(mode formatMode, base, followUps []Message) []Message {
	msgs := make([]Message, 0, len(base)+len(followUps)+1)
	if mode == formatSchema {
		msgs = append(msgs, base...)
	} else {
		instr := "Answer with one JSON object only: no prose, no Markdown code fences. It must validate against this JSON schema:\n" + s.text
		if len(base) > 0 && base[0].Role == RoleSystem {
			first := base[0]
			first.Content = strings.TrimRight(first.Content, "\n ") + "\n\n" + instr
			msgs = append(msgs, first)
			msgs = append(msgs, base[1:]...)
		} else {
			msgs = append(msgs, Message{Role: RoleSystem, Content: instr})
			msgs = append(msgs, base...)
		}
	}
	return append(msgs, followUps...)
}

// extractJSONObject finds the first complete JSON object in text that may
// wrap it in prose or Markdown code fences. Fenced blocks are tried first,
// since prose before them may contain stray braces or examples.
func extractJSONObject(text string) (string, bool) {
	rest := text
	for {
		open := strings.Index(rest, "```")
		if open < 0 {
			break
		}
		body := rest[open+3:]
		// Skip the info string (```json) up to the end of its line.
		if nl := strings.IndexByte(body, '\n'); nl >= 0 && !strings.Contains(body[:nl], "{") {
			body = body[nl+1:]
		}
		end := strings.Index(body, "```")
		if end < 0 {
			if obj, ok := firstObject(body); ok {
				return obj, true
			}
			break
		}
		if obj, ok := firstObject(body[:end]); ok {
			return obj, true
		}
		rest = body[end+3:]
	}
	return firstObject(text)
}

// firstObject returns the first balanced {...} span of s that is valid JSON.
func firstObject(s string) (string, bool) {
	for start := strings.IndexByte(s, '{'); start >= 0; {
		if end := matchBrace(s, start); end > start {
			if cand := s[start : end+1]; json.Valid([]byte(cand)) {
				return cand, true
			}
		}
		next := strings.IndexByte(s[start+1:], '{')
		if next < 0 {
			break
		}
		start += 1 + next
	}
	return "", false
}

// matchBrace returns the index of the brace closing the one at start,
// skipping braces inside JSON strings, or -1.
func matchBrace(s string, start int) int {
	depth := 0
	inString, escaped := false, false
	for i := start; i < len(s); i++ {
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
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}
