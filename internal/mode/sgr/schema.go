package sgr

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/sova-ai/sova/internal/tools"
)

// Tool names, as the model writes them in NextStep.function.tool and as
// they appear in the streams.
const (
	ToolClarification = "clarification"
	ToolGeneratePlan  = "generate_plan"
	ToolAdaptPlan     = "adapt_plan"
	ToolWebSearch     = tools.WebSearchName
	ToolExtract       = "extract_page_content"
	ToolCreateReport  = "create_report"
	ToolFinalAnswer   = "final_answer"

	// toolReasoning names the reasoning part of each step in the streams.
	toolReasoning = "reasoning"
)

// allTools is every tool in the order the schema offers them.
var allTools = []string{ToolClarification, ToolGeneratePlan, ToolAdaptPlan, ToolWebSearch, ToolExtract, ToolCreateReport, ToolFinalAnswer}

// Limits of the schema (those of SGR Agent Core).
const (
	maxSearchResults = 10 // web_search.max_results
	maxURLs          = 5  // extract_page_content.urls
)

// NextStep is what the model returns at every step: its reasoning about
// where the research stands and the one tool to run next.
type NextStep struct {
	ReasoningSteps   []string `json:"reasoning_steps"`
	CurrentSituation string   `json:"current_situation"`
	PlanStatus       string   `json:"plan_status"`
	EnoughData       bool     `json:"enough_data"`
	RemainingSteps   []string `json:"remaining_steps"`
	TaskCompleted    bool     `json:"task_completed"`
	Function         Function `json:"function"`
}

// Reasoning is NextStep without the function: what the agent shows and
// keeps as its current reasoning.
type Reasoning struct {
	ReasoningSteps   []string `json:"reasoning_steps"`
	CurrentSituation string   `json:"current_situation"`
	PlanStatus       string   `json:"plan_status"`
	EnoughData       bool     `json:"enough_data"`
	RemainingSteps   []string `json:"remaining_steps"`
	TaskCompleted    bool     `json:"task_completed"`
}

// Reasoning returns the step's reasoning.
func (n NextStep) Reasoning() Reasoning {
	return Reasoning{n.ReasoningSteps, n.CurrentSituation, n.PlanStatus, n.EnoughData, n.RemainingSteps, n.TaskCompleted}
}

// Validate rejects replies that fit the schema but cannot be acted on, so
// that Structured asks again with the reason.
func (n NextStep) Validate() error {
	if n.Function.Args == nil {
		return errors.New("function: no tool chosen")
	}
	return n.Function.Args.check()
}

// Function is the tool chosen at a step: Tool names it and Args holds its
// decoded arguments (one of the *Args types below).
type Function struct {
	Tool string
	Args toolArgs
	// Raw is the function object as the model wrote it.
	Raw json.RawMessage
}

// toolArgs is implemented by the arguments of every tool.
type toolArgs interface {
	check() error
}

// UnmarshalJSON decodes the union by its "tool" field.
func (f *Function) UnmarshalJSON(b []byte) error {
	var head struct {
		Tool string `json:"tool"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return err
	}
	var args toolArgs
	switch head.Tool {
	case ToolClarification:
		args = &ClarificationArgs{}
	case ToolGeneratePlan:
		args = &GeneratePlanArgs{}
	case ToolAdaptPlan:
		args = &AdaptPlanArgs{}
	case ToolWebSearch:
		args = &WebSearchArgs{}
	case ToolExtract:
		args = &ExtractArgs{}
	case ToolCreateReport:
		args = &CreateReportArgs{}
	case ToolFinalAnswer:
		args = &FinalAnswerArgs{}
	default:
		return fmt.Errorf("unknown tool %q", head.Tool)
	}
	if err := json.Unmarshal(b, args); err != nil {
		return fmt.Errorf("%s: %w", head.Tool, err)
	}
	f.Tool, f.Args, f.Raw = head.Tool, args, append(json.RawMessage(nil), b...)
	return nil
}

// MarshalJSON writes the function as the model wrote it.
func (f Function) MarshalJSON() ([]byte, error) {
	if len(f.Raw) > 0 {
		return f.Raw, nil
	}
	return json.Marshal(f.Args)
}

// ClarificationArgs asks the person before researching an unclear task.
type ClarificationArgs struct {
	Tool         string   `json:"tool"`
	Reasoning    string   `json:"reasoning"`
	UnclearTerms []string `json:"unclear_terms"`
	Assumptions  []string `json:"assumptions"`
	Questions    []string `json:"questions"`
}

func (a *ClarificationArgs) check() error {
	if nonEmpty(a.Questions) == 0 {
		return errors.New("clarification: questions must not be empty")
	}
	return nil
}

// GeneratePlanArgs is the first research plan.
type GeneratePlanArgs struct {
	Tool             string   `json:"tool"`
	Reasoning        string   `json:"reasoning"`
	ResearchGoal     string   `json:"research_goal"`
	PlannedSteps     []string `json:"planned_steps"`
	SearchStrategies []string `json:"search_strategies"`
}

func (a *GeneratePlanArgs) check() error {
	if strings.TrimSpace(a.ResearchGoal) == "" || nonEmpty(a.PlannedSteps) == 0 {
		return errors.New("generate_plan: research_goal and planned_steps must not be empty")
	}
	return nil
}

// AdaptPlanArgs changes the plan after what was found.
type AdaptPlanArgs struct {
	Tool         string   `json:"tool"`
	Reasoning    string   `json:"reasoning"`
	OriginalGoal string   `json:"original_goal"`
	NewGoal      string   `json:"new_goal"`
	PlanChanges  []string `json:"plan_changes"`
	NextSteps    []string `json:"next_steps"`
}

func (a *AdaptPlanArgs) check() error {
	if strings.TrimSpace(a.NewGoal) == "" || nonEmpty(a.NextSteps) == 0 {
		return errors.New("adapt_plan: new_goal and next_steps must not be empty")
	}
	return nil
}

// WebSearchArgs is one web search.
type WebSearchArgs struct {
	Tool       string `json:"tool"`
	Reasoning  string `json:"reasoning"`
	Query      string `json:"query"`
	MaxResults int    `json:"max_results"`
}

func (a *WebSearchArgs) check() error {
	if strings.TrimSpace(a.Query) == "" {
		return errors.New("web_search: query must not be empty")
	}
	return nil
}

// ExtractArgs reads pages, usually ones the searches found.
type ExtractArgs struct {
	Tool      string   `json:"tool"`
	Reasoning string   `json:"reasoning"`
	URLs      []string `json:"urls"`
}

func (a *ExtractArgs) check() error {
	if len(a.URLs) == 0 {
		return errors.New("extract_page_content: urls must not be empty")
	}
	for _, raw := range a.URLs {
		u, err := url.Parse(strings.TrimSpace(raw))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("extract_page_content: %q is not an http(s) URL", raw)
		}
	}
	return nil
}

// CreateReportArgs is the research report.
type CreateReportArgs struct {
	Tool      string `json:"tool"`
	Reasoning string `json:"reasoning"`
	Title     string `json:"title"`
	// UserRequestLanguageReference quotes the request, so that the model
	// looks at its language right before it writes the report.
	UserRequestLanguageReference string `json:"user_request_language_reference"`
	Content                      string `json:"content"`
	Confidence                   string `json:"confidence"`
}

func (a *CreateReportArgs) check() error {
	if strings.TrimSpace(a.Content) == "" {
		return errors.New("create_report: content must not be empty")
	}
	return nil
}

// FinalAnswerArgs ends the task.
type FinalAnswerArgs struct {
	Tool           string   `json:"tool"`
	Reasoning      string   `json:"reasoning"`
	CompletedSteps []string `json:"completed_steps"`
	Answer         string   `json:"answer"`
	Status         string   `json:"status"`
}

func (a *FinalAnswerArgs) check() error {
	if strings.TrimSpace(a.Answer) == "" {
		return errors.New("final_answer: answer must not be empty")
	}
	return nil
}

func nonEmpty(list []string) int {
	n := 0
	for _, s := range list {
		if strings.TrimSpace(s) != "" {
			n++
		}
	}
	return n
}

// Schema building. The schema is written out rather than derived from the
// Go types: the union needs anyOf with a one-value "tool" enum per branch
// (what strict structured output accepts), arrays carry their bounds, and
// the branches offered change with every step.

func str(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Description: desc}
}

func boolean(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "boolean", Description: desc}
}

func list(desc string, lo, hi int) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "array", Description: desc, Items: &jsonschema.Schema{Type: "string"}}
	if lo > 0 {
		s.MinItems = &lo
	}
	if hi > 0 {
		s.MaxItems = &hi
	}
	return s
}

func enum(desc string, values ...string) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "string", Description: desc}
	for _, v := range values {
		s.Enum = append(s.Enum, v)
	}
	return s
}

func integer(desc string, lo, hi float64) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "integer", Description: desc, Minimum: &lo, Maximum: &hi}
}

// prop is one property of an object schema, in order.
type prop struct {
	name   string
	schema *jsonschema.Schema
}

func object(desc string, props ...prop) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "object", Description: desc, Properties: map[string]*jsonschema.Schema{}}
	for _, p := range props {
		s.Properties[p.name] = p.schema
		s.PropertyOrder = append(s.PropertyOrder, p.name)
		s.Required = append(s.Required, p.name)
	}
	return s
}

// toolSchema is one branch of the function union.
func toolSchema(name string) *jsonschema.Schema {
	tool := prop{"tool", enum("the tool to run", name)}
	reasoning := prop{"reasoning", str("why this tool, now (one or two sentences)")}
	switch name {
	case ToolClarification:
		return object("Ask the person clarifying questions when the task is ambiguous or lacks what the research needs. Write in the language of the task.",
			tool, reasoning,
			prop{"unclear_terms", list("terms or parts of the task that are unclear", 1, 3)},
			prop{"assumptions", list("what you would assume if you had to go on without answers", 2, 3)},
			prop{"questions", list("specific questions to the person", 1, 3)})
	case ToolGeneratePlan:
		return object("Make a research plan before searching.",
			tool, reasoning,
			prop{"research_goal", str("what the research must establish")},
			prop{"planned_steps", list("the steps of the research", 3, 4)},
			prop{"search_strategies", list("how to search: angles, sources, key terms", 2, 3)})
	case ToolAdaptPlan:
		return object("Change the plan when what was found changes what is needed.",
			tool, reasoning,
			prop{"original_goal", str("the goal so far")},
			prop{"new_goal", str("the goal from now on")},
			prop{"plan_changes", list("what changes in the plan and why", 1, 3)},
			prop{"next_steps", list("the next steps", 2, 4)})
	case ToolWebSearch:
		return object("Search the web. Results give titles, addresses and snippets; read pages with extract_page_content to cite them.",
			tool, reasoning,
			prop{"query", str("the search query, specific, in the language most likely to find good sources")},
			prop{"max_results", integer("how many results to return", 1, maxSearchResults)})
	case ToolExtract:
		return object("Read web pages in full (usually ones the searches found). Only pages read can be cited.",
			tool, reasoning,
			prop{"urls", list("addresses of the pages to read", 1, maxURLs)})
	case ToolCreateReport:
		return object("Write the research report from the pages read, citing them inline as [n].",
			tool, reasoning,
			prop{"title", str("the report's title")},
			prop{"user_request_language_reference", str("the person's request quoted verbatim; the report is written in its language")},
			prop{"content", str("the report in Markdown, in the language of the request, every fact cited inline with the numbers of the pages read, like [1] or [2][3]; no list of sources at the end, it is added for you")},
			prop{"confidence", enum("how well the sources support the report", "high", "medium", "low")})
	case ToolFinalAnswer:
		return object("Finish the task with the answer (after a report: a short summary of it).",
			tool, reasoning,
			prop{"completed_steps", list("what was done", 1, 5)},
			prop{"answer", str("the answer in Markdown, in the language of the request, citing pages read as [n] where facts come from them")},
			prop{"status", enum("whether the task was accomplished", "completed", "failed")})
	}
	panic("sgr: no schema for tool " + name)
}

// nextStepSchema is the NextStep schema offering the given tools.
func nextStepSchema(tools []string) *jsonschema.Schema {
	branches := make([]*jsonschema.Schema, 0, len(tools))
	for _, t := range tools {
		branches = append(branches, toolSchema(t))
	}
	return object("The next step of the research.",
		prop{"reasoning_steps", list("step-by-step reasoning that leads to the decision, one sentence each", 2, 4)},
		prop{"current_situation", str("where the research stands")},
		prop{"plan_status", str("how far the plan has come")},
		prop{"enough_data", boolean("whether enough has been read for a report")},
		prop{"remaining_steps", list("the steps still to take, the next one first", 1, 3)},
		prop{"task_completed", boolean("whether the task is done")},
		prop{"function", &jsonschema.Schema{Description: "the one tool to run now", AnyOf: branches}})
}
