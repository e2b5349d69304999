package research

import (
	"errors"
	"fmt"
	"strings"
)

// The structured outputs of the pipeline. Each type's name is the schema
// name sent to the model (tests route on it).

// ClarificationCheck decides whether to ask the person before researching.
type ClarificationCheck struct {
	NeedsClarification bool     `json:"needs_clarification" jsonschema:"true only when the answers would change the research substantially"`
	Reason             string   `json:"reason" jsonschema:"why questions are or are not needed"`
	Questions          []string `json:"questions" jsonschema:"1 to 3 short questions for the person; empty when none are needed"`
}

// Complexity is how much research a request needs: a closed set (an enum
// in the schema; other values are re-asked).
type Complexity string

// Enum implements llm.Enum.
func (Complexity) Enum() []string { return []string{"simple", "moderate", "complex"} }

// Relevance is how much a note adds to the research.
type Relevance string

// Enum implements llm.Enum.
func (Relevance) Enum() []string { return []string{"high", "medium", "low"} }

// QueryAnalysis is the analyse-query stage (analyze_query_node).
type QueryAnalysis struct {
	QueryType   string     `json:"query_type" jsonschema:"kind of request, e.g. factual, comparative, historical, technical, market analysis"`
	Complexity  Complexity `json:"complexity" jsonschema:"how much research the request needs"`
	KeyAspects  []string   `json:"key_aspects" jsonschema:"the aspects a complete answer must cover"`
	Strategy    string     `json:"strategy" jsonschema:"how to research it: kinds of sources, angles, what to verify"`
	Constraints []string   `json:"constraints" jsonschema:"time frame, region, definitions or other limits stated or implied"`
}

// Validate implements the structured-output check.
func (a QueryAnalysis) Validate() error {
	if len(a.KeyAspects) == 0 {
		return errors.New("key_aspects must list at least one aspect")
	}
	return nil
}

// PlanTask is one research task of the plan.
type PlanTask struct {
	Title     string `json:"title" jsonschema:"short task title"`
	Objective string `json:"objective" jsonschema:"what to find out, concretely"`
}

// PlanTheme groups tasks under one aspect of the topic.
type PlanTheme struct {
	Title       string     `json:"title"`
	Description string     `json:"description"`
	Tasks       []PlanTask `json:"tasks"`
}

// ResearchPlan is the plan-research stage (plan_research_enhanced_node).
type ResearchPlan struct {
	Goal   string      `json:"goal" jsonschema:"what the finished research must answer"`
	Themes []PlanTheme `json:"themes" jsonschema:"the key aspects of the topic, each with its tasks"`
}

// Validate implements the structured-output check.
func (p ResearchPlan) Validate() error {
	if len(p.Themes) == 0 {
		return errors.New("themes must not be empty")
	}
	n := 0
	for _, th := range p.Themes {
		for _, t := range th.Tasks {
			if strings.TrimSpace(t.Title) != "" {
				n++
			}
		}
	}
	if n == 0 {
		return errors.New("the themes hold no task with a title")
	}
	return nil
}

// tasks lists the plan's tasks in order.
func (p ResearchPlan) tasks() []PlanTask {
	var out []PlanTask
	for _, th := range p.Themes {
		for _, t := range th.Tasks {
			if strings.TrimSpace(t.Title) != "" {
				out = append(out, t)
			}
		}
	}
	return out
}

// AgentProfile is one researcher's characteristics and first tasks.
type AgentProfile struct {
	Specialisation    string     `json:"specialisation" jsonschema:"e.g. Technical Expert, Historical Analyst"`
	Style             string     `json:"style" jsonschema:"how this agent works"`
	SourcePreferences string     `json:"source_preferences" jsonschema:"which sources it prefers"`
	Todos             []PlanTask `json:"todos" jsonschema:"the plan tasks this agent starts with"`
}

// AgentTeam is the create-agent-characteristics stage.
type AgentTeam struct {
	Agents []AgentProfile `json:"agents"`
}

// Validate implements the structured-output check. The number of agents
// is not checked here: the pipeline trims or completes the team to the
// configured size instead of spending re-asks on it.
func (t AgentTeam) Validate() error {
	if len(t.Agents) == 0 {
		return errors.New("agents must not be empty")
	}
	for i, a := range t.Agents {
		if strings.TrimSpace(a.Specialisation) == "" {
			return fmt.Errorf("agent %d has no specialisation", i+1)
		}
	}
	return nil
}

// AgentReflection is an agent's look back at its task every few steps.
type AgentReflection struct {
	Assessment   string `json:"assessment" jsonschema:"how well the results so far serve the task"`
	OnTrack      bool   `json:"on_track" jsonschema:"false when the results are not relevant and the approach must change"`
	NextApproach string `json:"next_approach" jsonschema:"what to do next: reformulated query, pages to read, or stop"`
	NeedsHelp    bool   `json:"needs_help" jsonschema:"true to ask the supervisor for help with this task"`
	HelpRequest  string `json:"help_request" jsonschema:"what to ask the supervisor; empty when no help is needed"`
}

// AgentNote is a note an agent writes when it finishes a task.
type AgentNote struct {
	Title     string    `json:"title" jsonschema:"what the note is about"`
	Findings  string    `json:"findings" jsonschema:"the important findings in Markdown, citing read pages as [n]; no metadata, no navigation text"`
	KeyFacts  []string  `json:"key_facts" jsonschema:"the most important facts, one per item"`
	Sources   []string  `json:"sources" jsonschema:"URLs of the read pages the findings rely on"`
	Relevance Relevance `json:"relevance" jsonschema:"how much this adds to the research"`
}

// Validate implements the structured-output check.
func (n AgentNote) Validate() error {
	if strings.TrimSpace(n.Title) == "" || strings.TrimSpace(n.Findings) == "" {
		return errors.New("title and findings must not be empty")
	}
	return nil
}

// ReportSection is one section of the final report.
type ReportSection struct {
	Title   string `json:"title"`
	Content string `json:"content" jsonschema:"300-800 words of Markdown citing sources as [n]"`
}

// FinalReport is the structured final report of seed 001 §4, stage 4.
type FinalReport struct {
	Title            string          `json:"title" jsonschema:"the report's title"`
	ExecutiveSummary string          `json:"executive_summary" jsonschema:"200-400 words"`
	Sections         []ReportSection `json:"sections" jsonschema:"at least 3 sections"`
	Conclusion       string          `json:"conclusion" jsonschema:"200-400 words"`
	Sources          []string        `json:"sources" jsonschema:"URLs of the numbered sources the report cites"`
}

// Validate implements the structured-output check; length is checked
// apart (see generateReport) so that a short report is re-asked with the
// draft in view, and the longest one kept if it stays short.
func (r FinalReport) Validate() error {
	if strings.TrimSpace(r.ExecutiveSummary) == "" || strings.TrimSpace(r.Conclusion) == "" {
		return errors.New("executive_summary and conclusion must not be empty")
	}
	n := 0
	for _, s := range r.Sections {
		if strings.TrimSpace(s.Title) != "" && strings.TrimSpace(s.Content) != "" {
			n++
		}
	}
	if n < 3 {
		return fmt.Errorf("sections must hold at least 3 sections with a title and content, got %d", n)
	}
	return nil
}
