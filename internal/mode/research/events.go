package research

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/sova-ai/sova/internal/event"
)

// Names of the mode's data events (UI stream parts data-<name>). Each
// value is a JSON object; events with the same id replace each other in a
// client, so an agent's card or the plan updates in place.
const (
	DataPlan     = "research_plan"       // id "research-plan"
	DataAgent    = "research_agent"      // id "agent-<n>"
	DataNote     = "research_note"       // id "note-<item>"
	DataDecision = "supervisor_decision" // id "decision-<call>"
)

// PlanData is the research_plan payload.
type PlanData struct {
	Goal     string          `json:"goal"`
	Themes   []PlanThemeData `json:"themes"`
	Revision int             `json:"revision"` // 0 for the first plan, then one per replan
}

// PlanThemeData is one theme of the plan.
type PlanThemeData struct {
	Title       string         `json:"title"`
	Description string         `json:"description,omitempty"`
	Tasks       []PlanTaskData `json:"tasks"`
}

// PlanTaskData is one task of a theme.
type PlanTaskData struct {
	Title     string `json:"title"`
	Objective string `json:"objective,omitempty"`
}

// Agent states.
const (
	AgentReady      = "ready"      // created, has todos
	AgentWorking    = "working"    // on a task
	AgentReflecting = "reflecting" // looking back at its task
	AgentWaiting    = "waiting"    // no todo; waits for the supervisor
	AgentDone       = "done"       // finished for this run
)

// Todo statuses.
const (
	TodoPending    = "pending"
	TodoInProgress = "in_progress"
	TodoDone       = "done"
	TodoFailed     = "failed"
	TodoSkipped    = "skipped" // dropped by a replan, a finish decision or a limit
)

// AgentData is the research_agent payload.
type AgentData struct {
	ID             string     `json:"id"` // "agent_1"
	Number         int        `json:"number"`
	Specialisation string     `json:"specialisation"`
	State          string     `json:"state"`
	CurrentTodo    string     `json:"currentTodo,omitempty"`
	Todos          []TodoData `json:"todos"`
	Notes          int        `json:"notes"`
	Detail         string     `json:"detail,omitempty"`
}

// TodoData is one todo of an agent.
type TodoData struct {
	ID     int    `json:"id"`
	Title  string `json:"title"`
	Status string `json:"status"`
	Item   int    `json:"item,omitempty"` // the note it produced
}

// NoteData is the research_note payload.
type NoteData struct {
	Item      int          `json:"item"`
	Agent     string       `json:"agent"`
	Todo      string       `json:"todo"`
	Title     string       `json:"title"`
	Relevance string       `json:"relevance,omitempty"`
	Sources   []NoteSource `json:"sources"`
	File      string       `json:"file"`
}

// NoteSource is a read page a note relies on.
type NoteSource struct {
	Number int    `json:"number"`
	URL    string `json:"url"`
	Title  string `json:"title,omitempty"`
}

// DecisionData is the supervisor_decision payload.
type DecisionData struct {
	Call     int           `json:"call"`
	MaxCalls int           `json:"maxCalls"`
	Agent    string        `json:"agent,omitempty"` // whose completed task was reviewed
	Decision string        `json:"decision"`        // continue, replan, finish
	Reason   string        `json:"reason,omitempty"`
	Forced   bool          `json:"forced,omitempty"` // the review ended without a decision
	NewTodos []NewTodoData `json:"newTodos"`
}

// NewTodoData is a todo the supervisor created.
type NewTodoData struct {
	Agent string `json:"agent"`
	Title string `json:"title"`
}

// emitData sends a data event; v must marshal to a JSON object.
func emitData(sink event.Sink, name, id string, v any) {
	raw, err := json.Marshal(v)
	if err != nil {
		return // the payload types above always marshal
	}
	sink.Emit(event.Event{Type: event.TypeData, Time: time.Now(), Data: &event.Data{Name: name, ID: id, Value: raw}})
}

func (s *session) emitPlan() {
	s.mu.Lock()
	plan := s.plan
	rev := s.planRevision
	s.mu.Unlock()
	d := PlanData{Goal: plan.Goal, Revision: rev, Themes: []PlanThemeData{}}
	for _, th := range plan.Themes {
		td := PlanThemeData{Title: th.Title, Description: th.Description, Tasks: []PlanTaskData{}}
		for _, t := range th.Tasks {
			td.Tasks = append(td.Tasks, PlanTaskData(t))
		}
		d.Themes = append(d.Themes, td)
	}
	emitData(s.sink, DataPlan, "research-plan", d)
}

func agentEventID(n int) string { return "agent-" + strconv.Itoa(n) }
