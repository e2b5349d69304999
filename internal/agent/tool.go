package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Tool is a function the model may call.
type Tool interface {
	Name() string
	Description() string
	// Schema is the JSON schema of the arguments, an object.
	Schema() *jsonschema.Schema
	// Call runs the tool with arguments that satisfy the schema. The text
	// returned is what the model sees; an error is shown to the model as
	// the tool's failure, and the run goes on (unless it is Fatal).
	Call(ctx context.Context, args json.RawMessage) (string, error)
}

// Runner is a Tool that says more about its result than the text the
// model reads: how it shows in the stream, and whether it ends the loop.
// The loop calls Run instead of Call when a tool implements it; NewTool's
// tools do.
type Runner interface {
	Run(ctx context.Context, args json.RawMessage) (Output, error)
}

// Titler is a Tool that titles its calls for people ("Searching the web
// for …"); the tool-call event carries the title.
type Titler interface {
	Title(args json.RawMessage) string
}

// Output is what a tool call produced.
type Output struct {
	// Text is what the model reads.
	Text string
	// Summary is a short Markdown text for people: the tool-result
	// event's text ("5 results").
	Summary string
	// Data is the structured result for UIs: the tool-result event's
	// output. Nil: Text, when it is JSON.
	Data json.RawMessage
	// Stop ends the loop after this step's calls (deep_research's done,
	// make_final_decision).
	Stop bool
}

// Text is an Output of text only.
func Text(s string) Output { return Output{Text: s} }

// FatalError is a tool failure that ends the run rather than being shown
// to the model: the run's workspace cannot be written, for example.
type FatalError struct{ Err error }

func (e *FatalError) Error() string { return e.Err.Error() }
func (e *FatalError) Unwrap() error { return e.Err }

// Fatal marks err as ending the run: a tool returning it stops the loop
// after the step, and Run returns it.
func Fatal(err error) error {
	if err == nil {
		return nil
	}
	return &FatalError{Err: err}
}

// IsFatal reports whether err was marked Fatal.
func IsFatal(err error) bool {
	var f *FatalError
	return errors.As(err, &f)
}

// ToolOption configures a tool made by NewTool.
type ToolOption func(*toolConfig)

type toolConfig struct {
	title  func(json.RawMessage) string
	schema []func(*jsonschema.Schema)
	fix    func(map[string]any)
}

// WithArgFix mends sloppy forms of the tool's arguments before they are
// checked against its schema (ArgFixer).
func WithArgFix(fix func(args map[string]any)) ToolOption {
	return func(c *toolConfig) { c.fix = fix }
}

// WithTitle titles the tool's calls for people.
func WithTitle[In any](title func(in In) string) ToolOption {
	return func(c *toolConfig) {
		c.title = func(raw json.RawMessage) string {
			var in In
			_ = decode(raw, &in)
			return title(in)
		}
	}
}

// WithSchema adjusts the schema made from the argument type: an enum, a
// bound the Go type cannot say.
func WithSchema(edit func(s *jsonschema.Schema)) ToolOption {
	return func(c *toolConfig) { c.schema = append(c.schema, edit) }
}

// NewTool makes a tool from a function of its arguments. The arguments'
// JSON schema comes from In (a struct: fields are required unless tagged
// omitempty; the jsonschema tag is a field's description); the loop checks
// and repairs the model's arguments against it before call sees them.
// NewTool panics if In has no JSON schema: tools are declared in code.
func NewTool[In any](name, description string, call func(ctx context.Context, in In) (Output, error), opts ...ToolOption) Tool {
	var cfg toolConfig
	for _, o := range opts {
		o(&cfg)
	}
	s, err := SchemaFor[In]()
	if err != nil {
		panic(fmt.Sprintf("agent: tool %s: %v", name, err))
	}
	for _, edit := range cfg.schema {
		edit(s)
	}
	return &funcTool[In]{name: name, description: description, schema: s, call: call, title: cfg.title, fix: cfg.fix}
}

type funcTool[In any] struct {
	name, description string
	schema            *jsonschema.Schema
	call              func(context.Context, In) (Output, error)
	title             func(json.RawMessage) string
	fix               func(map[string]any)
}

func (t *funcTool[In]) FixArgs(args map[string]any) {
	if t.fix != nil {
		t.fix(args)
	}
}

func (t *funcTool[In]) Name() string               { return t.name }
func (t *funcTool[In]) Description() string        { return t.description }
func (t *funcTool[In]) Schema() *jsonschema.Schema { return t.schema }

func (t *funcTool[In]) Call(ctx context.Context, args json.RawMessage) (string, error) {
	out, err := t.Run(ctx, args)
	return out.Text, err
}

func (t *funcTool[In]) Run(ctx context.Context, args json.RawMessage) (Output, error) {
	var in In
	if err := decode(args, &in); err != nil {
		return Output{}, fmt.Errorf("the arguments do not fit the tool's parameters: %w", err)
	}
	return t.call(ctx, in)
}

func (t *funcTool[In]) Title(args json.RawMessage) string {
	if t.title == nil {
		return t.name
	}
	return t.title(args)
}

func decode(raw json.RawMessage, v any) error {
	if len(strings.TrimSpace(string(raw))) == 0 {
		raw = json.RawMessage("{}")
	}
	return json.Unmarshal(raw, v)
}

// SchemaFor is the JSON schema of a tool's arguments of type In, as
// NewTool makes it.
func SchemaFor[In any]() (*jsonschema.Schema, error) {
	return jsonschema.For[In](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[StringList](): {AnyOf: []*jsonschema.Schema{
			{Type: "array", Items: &jsonschema.Schema{Type: "string"}},
			{Type: "string"},
		}},
	}})
}

// StringList is a list of strings that also accepts a single string,
// which models often send for a one-element list. Its schema allows both.
type StringList []string

// UnmarshalJSON implements json.Unmarshaler.
func (l *StringList) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*l = StringList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*l = many
	return nil
}
