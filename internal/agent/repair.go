package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sova-ai/sova/internal/llm"
)

// ArgFixer is a Tool that mends sloppy forms of its own arguments before
// they are checked ("month" for a range of "1mo"): forms only the tool
// knows to be unambiguous. FixArgs edits args in place.
type ArgFixer interface {
	FixArgs(args map[string]any)
}

// argSchema is what repair needs of a tool's schema: each property's
// schema resolved on its own, so that one bad optional value can be told
// from the rest, and which properties are required.
type argSchema struct {
	props      map[string]*jsonschema.Schema
	resolved   map[string]*jsonschema.Resolved
	required   map[string]bool
	closed     bool // unknown properties are refused
	paramsJSON map[string]any
}

func newArgSchema(s *jsonschema.Schema, params map[string]any) *argSchema {
	a := &argSchema{props: map[string]*jsonschema.Schema{}, resolved: map[string]*jsonschema.Resolved{},
		required: map[string]bool{}, paramsJSON: params}
	for _, r := range s.Required {
		a.required[r] = true
	}
	a.closed = s.AdditionalProperties != nil && s.AdditionalProperties.Not != nil
	for name, p := range s.Properties {
		if p == nil {
			continue
		}
		a.props[name] = p
		if r, err := p.Resolve(nil); err == nil {
			a.resolved[name] = r
		}
	}
	return a
}

// checkArgs parses and validates a call's arguments. Arguments that do
// not fit are mended, cheapest first: locally (almost-JSON repaired,
// sloppy values coerced to the schema, invalid optional arguments
// dropped), then, when there is a repair model, by asking it once for
// arguments constrained by the tool's schema. notes tell the model what
// was dropped, so that it can call again with better values.
func checkArgs(ctx context.Context, repair llm.Model, t *tool, raw string) (args json.RawMessage, repaired bool, notes []string, err error) {
	args, err = validate(t, raw)
	if err == nil {
		return args, false, nil, nil
	}
	if args, notes, lerr := mendArgs(t, raw); lerr == nil {
		return args, true, notes, nil
	}
	if repair == nil {
		return nil, false, nil, fmt.Errorf("invalid arguments for %s: %v", t.Name(), err)
	}
	fixed, rerr := repairArgs(ctx, repair, t, raw, err)
	if rerr != nil {
		return nil, false, nil, fmt.Errorf("invalid arguments for %s: %v (repair failed: %v)", t.Name(), err, rerr)
	}
	args, notes, err2 := mendArgs(t, fixed)
	if err2 != nil {
		return nil, false, nil, fmt.Errorf("invalid arguments for %s: %v; the repaired arguments were invalid too: %v", t.Name(), err, err2)
	}
	return args, true, notes, nil
}

// mendArgs repairs raw locally: almost-JSON is mended, values are
// coerced to their property's schema, and optional arguments that are
// still invalid (or unknown to a closed schema) are dropped and named in
// the notes.
func mendArgs(t *tool, raw string) (json.RawMessage, []string, error) {
	obj, err := parseObject(raw)
	if err != nil {
		return nil, nil, err
	}
	if f, ok := t.Tool.(ArgFixer); ok {
		f.FixArgs(obj)
	}
	var notes []string
	for _, name := range sortedKeys(obj) {
		p, known := t.args.props[name]
		if !known {
			if t.args.closed {
				delete(obj, name)
				notes = append(notes, fmt.Sprintf("the argument %q is not a parameter of %s and was ignored", name, t.Name()))
			}
			continue
		}
		obj[name] = coerce(p, obj[name])
		r := t.args.resolved[name]
		if r == nil || t.args.required[name] {
			continue
		}
		if verr := r.Validate(obj[name]); verr != nil {
			notes = append(notes, fmt.Sprintf("the optional argument %q had an invalid value (%s: %v) and was left out; the tool ran without it", name, short(obj[name]), verr))
			delete(obj, name)
		}
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, nil, err
	}
	args, err := validate(t, string(b))
	if err != nil {
		return nil, nil, err
	}
	return args, notes, nil
}

// parseObject reads raw as a JSON object, mending almost-JSON (a code
// fence, a cut-off tail, trailing commas, single quotes) and arguments
// encoded twice, as a JSON string holding the object.
func parseObject(raw string) (map[string]any, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return map[string]any{}, nil
	}
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		fixed, ok := llm.RepairJSON(raw)
		if !ok {
			return nil, fmt.Errorf("arguments are not valid JSON: %w", err)
		}
		if err := json.Unmarshal([]byte(fixed), &v); err != nil {
			return nil, fmt.Errorf("arguments are not valid JSON: %w", err)
		}
	}
	if s, ok := v.(string); ok { // {"query":…} sent as a JSON string
		return parseObject(s)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("arguments must be a JSON object")
	}
	return obj, nil
}

// coerce turns a value into the form its schema asks for where that is
// unambiguous: a string enum matched without regard to case, spaces,
// hyphens or underscores; a number written as a string; a single value
// where an array is wanted; "true"/"false" for a boolean. Anything else
// is returned as it is.
func coerce(s *jsonschema.Schema, v any) any {
	if s == nil {
		return v
	}
	if len(s.Enum) > 0 {
		if str, ok := v.(string); ok {
			if e, ok := matchEnum(s.Enum, str); ok {
				return e
			}
		}
		return v
	}
	switch schemaType(s) {
	case "integer", "number":
		if str, ok := v.(string); ok {
			if f, err := strconv.ParseFloat(strings.TrimSpace(str), 64); err == nil {
				return f
			}
		}
	case "boolean":
		if str, ok := v.(string); ok {
			if b, err := strconv.ParseBool(strings.TrimSpace(str)); err == nil {
				return b
			}
		}
	case "string":
		if f, ok := v.(float64); ok {
			return strconv.FormatFloat(f, 'f', -1, 64)
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			if v == nil {
				return v
			}
			arr = []any{v}
		}
		for i := range arr {
			arr[i] = coerce(s.Items, arr[i])
		}
		return arr
	}
	return v
}

func schemaType(s *jsonschema.Schema) string {
	if s.Type != "" {
		return s.Type
	}
	for _, t := range s.Types {
		if t != "null" {
			return t
		}
	}
	return ""
}

// matchEnum finds the one enum value that v spells loosely.
func matchEnum(enum []any, v string) (any, bool) {
	key := looseKey(v)
	var found []any
	for _, e := range enum {
		if s, ok := e.(string); ok && looseKey(s) == key {
			found = append(found, e)
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	return nil, false
}

func looseKey(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '-', '_', '\t':
			return -1
		}
		return r
	}, strings.ToLower(strings.TrimSpace(s)))
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func short(v any) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 80 {
		s = s[:77] + "…"
	}
	return s
}

// repairArgs asks the repair model to rewrite the arguments so that they
// fit the schema, constraining its reply to that schema (json_schema)
// where the endpoint allows it and asking in plain text where it refuses.
func repairArgs(ctx context.Context, model llm.Model, t *tool, raw string, problem error) (string, error) {
	sys := "You fix malformed tool calls. Reply with only the corrected JSON object of arguments: no prose, no code fence. " +
		"Keep the caller's intent and values; fix the format (arrays, types, quoting) and fill missing required fields sensibly."
	user := fmt.Sprintf("Tool: %s\nDescription: %s\nJSON schema of the arguments:\n%s\n\nThe call's arguments:\n%s\n\nProblem: %v",
		t.Name(), t.Description(), t.schema, raw, problem)
	req := llm.Request{
		Messages: []llm.Message{{Role: llm.RoleSystem, Content: sys}, {Role: llm.RoleUser, Content: user}},
		ResponseFormat: &llm.ResponseFormat{Type: llm.FormatJSONSchema, Name: schemaName(t.Name()) + "_arguments",
			Schema: t.args.paramsJSON},
	}
	resp, err := model.Complete(ctx, req)
	var ae *llm.APIError
	if err != nil && errors.As(err, &ae) && (ae.StatusCode == 400 || ae.StatusCode == 422) {
		// An endpoint that takes no json_schema: ask again in plain text.
		req.ResponseFormat = nil
		resp, err = model.Complete(ctx, req)
	}
	if err != nil {
		return "", err
	}
	return resp.Content, nil
}

// schemaName is a tool name as a json_schema name ([a-zA-Z0-9_-]).
func schemaName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, s)
}
