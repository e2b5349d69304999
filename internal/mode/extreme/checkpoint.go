package extreme

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
)

// Checkpoints: the run's state, saved in its workspace at each step that
// cost money (the plan made, each reply of the research agent, each tool
// result: a search's sources, a code cell's output and charts; the
// research done; the answer written), so that a run continued after its
// node stopped (mode.Input.Continued) goes on from the last one instead
// of paying for the same model calls and code runs again. A tool call
// under way when the node stopped is run again, under the same part id,
// so that what the client showed of it is replaced.

// errCheckpoint marks a checkpoint that could not be saved: the run ends
// rather than going on without a way to continue.
var errCheckpoint = errors.New("extreme: the checkpoint")

// fileCheckpoint is the run file that holds the checkpoint; the research
// agent's conversation is kept a message a file (messageFile), each
// written once, so that a checkpoint writes only what is new and no file
// grows past the workspace's limit on one file.
const fileCheckpoint = "checkpoint.json"

func messageFile(i int) string { return fmt.Sprintf("checkpoint/message_%03d.json", i) }

// Phases of a checkpoint.
const (
	phaseResearch = "research" // the plan is made; the agent is at work
	phaseAnswer   = "answer"   // the research is done; the answer is left
	phaseDone     = "done"     // the answer is written; its report is left
)

type checkpoint struct {
	Version   int               `json:"v"`
	Phase     string            `json:"phase"`
	Question  string            `json:"question"`
	Plan      []PlanTheme       `json:"plan"`
	Withdrawn []mode.ToolStatus `json:"withdrawn,omitempty"`
	// Steps are the research agent's, as agent.Config's Checkpoint gave
	// them, without the tool results' output (the conversation holds it);
	// Messages is how many messages of its conversation the checkpoint
	// holds (phase research).
	Steps    []agent.Step `json:"steps,omitempty"`
	Messages int          `json:"messages,omitempty"`
	// Notes are the agent's summary (phases answer and done).
	Notes   string        `json:"notes,omitempty"`
	Sources []savedSource `json:"sources,omitempty"` // in citation order
	Cells   []savedCell   `json:"cells,omitempty"`
	Posts   int           `json:"posts,omitempty"`
	Parts   []savedPart   `json:"parts,omitempty"`
	Answer  *savedAnswer  `json:"answer,omitempty"` // phase done
}

type savedSource struct {
	N      int         `json:"n"`
	Source sova.Source `json:"source"`
	Text   string      `json:"text,omitempty"`
}

type savedCell struct {
	Title  string  `json:"title"`
	Stdout string  `json:"stdout,omitempty"`
	Stderr string  `json:"stderr,omitempty"`
	Exit   int     `json:"exit"`
	Charts []Chart `json:"charts,omitempty"`
}

// savedPart is the last state of one stream part, for the stored record.
type savedPart struct {
	ID   string          `json:"id"`
	Part json.RawMessage `json:"part"`
}

type savedAnswer struct {
	Text         string        `json:"text"`
	Sources      []sova.Source `json:"sources,omitempty"`
	Model        string        `json:"model,omitempty"`
	FinishReason string        `json:"finishReason,omitempty"`
}

// saveCheckpoint writes the run's state with the agent's steps and
// conversation (phase research) or the answer (phase done). Saves are
// ordered: each writes the state as it is when it runs. Without a
// workspace there is nothing to continue from and nothing is saved.
func (s *session) saveCheckpoint(ctx context.Context, phase string, steps []agent.Step, msgs []llm.Message, notes string, ans *savedAnswer) error {
	if s.ws == nil {
		return nil
	}
	s.cpMu.Lock()
	defer s.cpMu.Unlock()
	// The conversation only grows: the messages not written yet.
	for i := s.cpMessages; i < len(msgs); i++ {
		data, err := json.Marshal(msgs[i])
		if err != nil {
			return fmt.Errorf("%w could not be encoded: %w", errCheckpoint, err)
		}
		if err := s.ws.Write(ctx, messageFile(i), string(data)); err != nil {
			return fmt.Errorf("%w could not be saved: %w", errCheckpoint, err)
		}
		s.cpMessages = i + 1
	}
	cp := checkpoint{Version: 1, Phase: phase, Question: s.in.Question, Plan: s.themes, Withdrawn: s.withdrawn,
		Messages: len(msgs), Notes: notes, Answer: ans}
	for _, st := range steps {
		st.Results = slices.Clone(st.Results)
		for i := range st.Results {
			st.Results[i].Output = ""
		}
		cp.Steps = append(cp.Steps, st)
	}
	s.mu.Lock()
	for _, f := range s.sources {
		cp.Sources = append(cp.Sources, savedSource{N: f.n, Source: f.src, Text: f.text})
	}
	for _, c := range s.cells {
		cp.Cells = append(cp.Cells, savedCell{Title: c.title, Stdout: c.stdout, Stderr: c.stderr, Exit: c.exit, Charts: c.charts})
	}
	cp.Posts = s.posts
	s.mu.Unlock()
	ids, parts := s.parts.saved()
	for i, id := range ids {
		cp.Parts = append(cp.Parts, savedPart{ID: id, Part: parts[i]})
	}
	data, err := json.Marshal(cp)
	if err != nil {
		return fmt.Errorf("%w could not be encoded: %w", errCheckpoint, err)
	}
	if err := s.ws.Write(ctx, fileCheckpoint, string(data)); err != nil {
		return fmt.Errorf("%w could not be saved: %w", errCheckpoint, err)
	}
	return nil
}

// loadCheckpoint reads the last checkpoint; false when there is none.
func (s *session) loadCheckpoint(ctx context.Context) (*checkpoint, bool, error) {
	doc, err := s.ws.Read(ctx, fileCheckpoint)
	if errors.Is(err, mode.ErrNoFile) || err == nil && doc == "" {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("extreme: reading the checkpoint: %w", err)
	}
	var cp checkpoint
	if err := json.Unmarshal([]byte(doc), &cp); err != nil || cp.Version != 1 {
		return nil, false, fmt.Errorf("extreme: the checkpoint cannot be read (version %d): %v", cp.Version, err)
	}
	if strings.TrimSpace(cp.Question) != strings.TrimSpace(s.in.Question) {
		return nil, false, errors.New("extreme: the checkpoint is of another question")
	}
	return &cp, true, nil
}

// loadMessages reads the research agent's conversation as the checkpoint
// holds it.
func (s *session) loadMessages(ctx context.Context, n int) ([]llm.Message, error) {
	msgs := make([]llm.Message, n)
	for i := range msgs {
		doc, err := s.ws.Read(ctx, messageFile(i))
		if err == nil {
			err = json.Unmarshal([]byte(doc), &msgs[i])
		}
		if err != nil {
			return nil, fmt.Errorf("extreme: reading message %d of the checkpoint: %w", i, err)
		}
	}
	s.cpMessages = n
	return msgs, nil
}

// restoreCheckpoint sets the session to a checkpoint: the plan, the
// sources under their citation numbers, the code cells with their charts
// (read back from the run's files, for the report's PDF) and the parts
// shown so far.
func (s *session) restoreCheckpoint(ctx context.Context, cp *checkpoint) error {
	s.themes, s.withdrawn = cp.Plan, cp.Withdrawn
	for _, ss := range cp.Sources {
		if n := s.addSource(ss.Source, ss.Text); n != ss.N {
			return fmt.Errorf("extreme: the checkpoint's source %d came back as %d", ss.N, n)
		}
	}
	for _, c := range cp.Cells {
		s.cells = append(s.cells, cell{title: c.Title, stdout: c.Stdout, stderr: c.Stderr, exit: c.Exit, charts: c.Charts})
		for _, ch := range c.Charts {
			if ch.Path == "" || ch.URL == "" {
				continue
			}
			data, _, err := s.ws.ReadBytes(ctx, ch.Path)
			if err != nil {
				mode.Warn(s.sink, "code", "A chart of the run could not be read back; the report's PDF is without it", err.Error())
				continue
			}
			s.charts[ch.URL] = data
		}
	}
	s.posts = cp.Posts
	for _, p := range cp.Parts {
		s.parts.restore(p.ID, p.Part)
	}
	return nil
}

// continueFrom goes on from a checkpoint, to the answer.
func (s *session) continueFrom(ctx context.Context, cp *checkpoint) (*mode.Result, error) {
	if err := s.restoreCheckpoint(ctx, cp); err != nil {
		return nil, err
	}
	steps := 0
	for _, st := range cp.Steps {
		steps += len(st.Calls)
	}
	mode.Status(s.sink, "continue", "Continuing the research from its last checkpoint",
		fmt.Sprintf("%s; %d tool calls done, %d sources, %d code cells", cp.Phase, steps, len(cp.Sources), len(cp.Cells)))
	switch cp.Phase {
	case phaseDone:
		if cp.Answer == nil {
			return nil, errors.New("extreme: the checkpoint of the written answer holds no answer")
		}
		// The answer again, as it was: the run engine leaves out what its
		// log shows the client had already.
		s.sink.Emit(mode.TextDelta(cp.Answer.Text))
		return s.result(ctx, &mode.Result{Text: cp.Answer.Text, Sources: cp.Answer.Sources, Model: cp.Answer.Model, FinishReason: cp.Answer.FinishReason}), nil
	case phaseAnswer:
		return s.answer(ctx, cp.Notes)
	case phaseResearch:
		var msgs []llm.Message // none: the agent had not begun
		if cp.Messages > 0 {
			var err error
			if msgs, err = s.loadMessages(ctx, cp.Messages); err != nil {
				return nil, err
			}
		}
		return s.researchAndAnswer(ctx, s.tools(false), cp.Steps, msgs)
	}
	return nil, fmt.Errorf("extreme: the checkpoint's phase %q is unknown", cp.Phase)
}
