package assistant

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/rank"
	"github.com/sova-ai/sova/internal/tools"
)

type reasonArgs struct {
	Reason string `json:"reason" jsonschema:"why, in a few words"`
}

// handoff is a tool that passes the conversation to another agent.
func handoff(name, to, desc string, g *gate) agent.Tool {
	return agent.NewTool(name, desc, func(_ context.Context, in reasonArgs) (agent.Output, error) {
		g.to, g.why = to, in.Reason
		return agent.Output{Text: "Control passes to the " + to + " agent.", Summary: "→ " + to, Stop: true}, nil
	}, agent.WithTitle(func(reasonArgs) string { return "Handing off to the " + to + " agent" }))
}

// agentTools returns an agent's tools and its instructions.
func (t *turn) agentTools(name string, g *gate) ([]agent.Tool, string) {
	var ts []agent.Tool
	switch name {
	case Router:
		ts = append(ts, t.mcpTools()...)
		ts = append(ts,
			handoff("transfer_to_knowledge", Knowledge, "Hand the conversation to the knowledge agent: questions about what was written or discussed in the person's documents and past conversations.", g),
			handoff("transfer_to_interview", Interview, "Hand the conversation to the interview agent: a new person whose interview is not completed (checkInterviewStatus), or a person who asks to personalise the assistant.", g),
			t.userInfoTool(), t.interviewStatusTool(), t.supervisorTool(g), t.taskTool())
		return ts, t.routerPrompt()
	case Knowledge:
		ts = append(ts, agent.UntrustedTools("search", t.knowledgeTools())...)
		ts = append(ts, handoff("return_to_router", Router, "Return control to the router: the person wants an action (send, create, schedule) or something outside searching documents and past conversations.", g))
		return ts, t.knowledgePrompt()
	case Interview:
		ts = append(ts, t.userInfoTool(), t.interviewStatusTool(), t.savePreferenceTool(),
			agent.NewTool("finish_interview", "End the interview (all questions answered, or the person wants to stop) and return control to the router.",
				func(ctx context.Context, in reasonArgs) (agent.Output, error) {
					t.m.finishInterview(ctx, t)
					g.to, g.why = Router, in.Reason
					return agent.Output{Text: "Interview finished; control returns to the router.", Summary: "Interview finished", Stop: true}, nil
				}, agent.WithTitle(func(reasonArgs) string { return "Finishing the interview" })))
		return ts, t.interviewPrompt()
	}
	return nil, ""
}

// mcpTools are the MCP servers' tools; the loop's gate holds those that
// change something (agent.Acting) for the person's approval.
func (t *turn) mcpTools() []agent.Tool {
	return agent.UntrustedTools("MCP", t.mcp.AgentTools())
}

// knowledgeTools search the person's spaces and past chats, citing what
// they find.
func (t *turn) knowledgeTools() []agent.Tool {
	return t.m.knowledgeTools(context.Background(), t.in.UserID, t.in.ChatID, t.cites)
}

func (m *Mode) knowledgeTools(ctx context.Context, userID, chatID string, cites *tools.Citations) []agent.Tool {
	var out []agent.Tool
	if m.d.Documents != nil {
		if spaces, err := m.d.Documents.Spaces(ctx, userID); err == nil && len(spaces) > 0 {
			run := tools.NewRun(tools.Providers{Documents: m.d.Documents}, nil)
			out = append(out, tools.SearchDocuments(run, tools.SearchDocumentsOptions{UserID: userID, Spaces: spaces, Results: m.cfg.DocResults, Calls: 4, Cite: cites}))
		}
	}
	if m.d.Messages != nil {
		out = append(out, m.searchChats(userID, chatID, cites))
	}
	return out
}

type searchChatsArgs struct {
	Query string `json:"query" jsonschema:"what to look for in the person's past conversations: names, projects, topics"`
}

// chatHit is one message found in the person's past chats.
type chatHit struct {
	N      int    `json:"n,omitempty"`
	ChatID string `json:"chatId"`
	Role   string `json:"role"`
	Date   string `json:"date"`
	Text   string `json:"text"`
}

// searchChats searches the person's own past conversations through the
// store's full-text index (sova.MessageStore.SearchMessages), with the
// query's words stemmed (Russian and English) and matched as prefixes,
// ranked by the engine (BM25 in SQLite, ts_rank_cd in PostgreSQL).
func (m *Mode) searchChats(userID, chatID string, cites *tools.Citations) agent.Tool {
	return agent.NewTool("search_chats", "Search the person's own past conversations with Sova. Returns numbered messages with their chat and date.",
		func(ctx context.Context, in searchChatsArgs) (agent.Output, error) {
			// The conversation at hand is in the context already.
			msgs, err := m.d.Messages.SearchMessages(ctx, userID, rank.Tokenize(in.Query), chatID, chatHits)
			if err != nil {
				return agent.Output{}, fmt.Errorf("searching past conversations: %w", err)
			}
			hits := []chatHit{}
			for _, msg := range msgs {
				h := chatHit{ChatID: msg.ChatID, Role: msg.Role, Date: msg.CreatedAt.Format("2006-01-02"), Text: clip(msg.Content, 1200)}
				if cites != nil {
					h.N = cites.Number(sova.Source{URL: "/c/" + msg.ChatID, Title: "Chat of " + h.Date, Snippet: clip(msg.Content, 300), Kind: "chat"})
				}
				hits = append(hits, h)
			}
			b, _ := json.Marshal(map[string]any{"query": in.Query, "results": hits})
			return agent.Output{Text: string(b), Summary: fmt.Sprintf("%d messages", len(hits)), Data: b}, nil
		}, agent.WithTitle(func(in searchChatsArgs) string { return "Searching your past chats for “" + in.Query + "”" }))
}

// chatHits is how many messages one search_chats call returns.
const chatHits = 6

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// The interview (seed 004): four questions, then three more if the person
// wants to go on. Answers are kept as preferences under these keys.
var interviewQuestions = []struct{ Key, EN, RU string }{
	{"role", "What is your role, and how should I address you?", "Какая у вас роль и как к вам обращаться?"},
	{"style", "Do you prefer short answers or detailed ones, and in which language?", "Вы предпочитаете краткие ответы или подробные, и на каком языке?"},
	{"schedule", "What are your working hours, and when do you prefer meetings?", "Какие у вас рабочие часы и когда удобнее встречи?"},
	{"priorities", "Which projects or topics matter most to you now?", "Какие проекты или темы для вас сейчас важнее всего?"},
	{"contacts", "Who are the people you work with most?", "С кем вы работаете чаще всего?"},
	{"channels", "How should I reach out for you: mail, calendar invitations, or ask you first each time?", "Как мне действовать за вас: письмом, приглашением в календаре или каждый раз спрашивать?"},
	{"avoid", "Is there anything I should avoid or always keep in mind?", "Есть ли что-то, чего мне стоит избегать или всегда учитывать?"},
}

// Core is how many questions make an interview complete.
const interviewCore = 4

const prefPrefix = "interview."

func (t *turn) userInfoTool() agent.Tool {
	return agent.NewTool("getCurrentUserInfo", "The person's profile: id, language, time zone and the preferences they gave.",
		func(ctx context.Context, _ struct{}) (agent.Output, error) {
			s := t.settings
			prefs := map[string]string{}
			for k, v := range s.Preferences {
				prefs[strings.TrimPrefix(k, prefPrefix)] = v
			}
			tz := s.TimeZone
			if tz == "" {
				tz = t.in.Timezone
			}
			b, _ := json.Marshal(map[string]any{"userId": t.in.UserID, "language": s.Language, "timeZone": tz,
				"customInstructions": s.CustomInstructions, "preferences": prefs})
			return agent.Output{Text: string(b), Summary: "Your profile", Data: b}, nil
		}, agent.WithTitle(func(struct{}) string { return "Reading your profile" }))
}

// interviewStatus says how far the person's interview has come.
func interviewStatus(s sova.UserSettings) (done bool, answered []string, next string) {
	for _, q := range interviewQuestions {
		if _, ok := s.Preferences[prefPrefix+q.Key]; ok {
			answered = append(answered, q.Key)
		} else if next == "" {
			next = q.Key
		}
	}
	done = s.Preferences[prefPrefix+"completed"] == "true"
	if !done {
		n := 0
		for _, q := range interviewQuestions[:interviewCore] {
			if slices.Contains(answered, q.Key) {
				n++
			}
		}
		done = n == interviewCore && next == ""
	}
	return done, answered, next
}

func (t *turn) interviewStatusTool() agent.Tool {
	return agent.NewTool("checkInterviewStatus", "Whether the person's interview is completed, which questions are answered and which comes next.",
		func(ctx context.Context, _ struct{}) (agent.Output, error) {
			done, answered, next := interviewStatus(t.settings)
			b, _ := json.Marshal(map[string]any{"completed": done, "answered": answered, "next": next})
			return agent.Output{Text: string(b), Summary: map[bool]string{true: "Interview completed", false: "Interview not completed"}[done], Data: b}, nil
		}, agent.WithTitle(func(struct{}) string { return "Checking the interview" }))
}

type prefArgs struct {
	Question string `json:"question" jsonschema:"the key of the question answered: role, style, schedule, priorities, contacts, channels or avoid"`
	Answer   string `json:"answer" jsonschema:"the person's answer, in their words, briefly"`
}

func (t *turn) savePreferenceTool() agent.Tool {
	return agent.NewTool("save_preference", "Save the person's answer to one interview question as their preference.",
		func(ctx context.Context, in prefArgs) (agent.Output, error) {
			if !slices.ContainsFunc(interviewQuestions, func(q struct{ Key, EN, RU string }) bool { return q.Key == in.Question }) {
				return agent.Output{}, fmt.Errorf("unknown question %q: use role, style, schedule, priorities, contacts, channels or avoid", in.Question)
			}
			if t.m.d.Settings == nil {
				return agent.Output{}, fmt.Errorf("preferences cannot be saved on this server")
			}
			s, err := t.m.d.Settings.UserSettings(ctx, t.in.UserID)
			if err != nil {
				return agent.Output{}, fmt.Errorf("reading your settings: %w", err)
			}
			if s.Preferences == nil {
				s.Preferences = map[string]string{}
			}
			s.Preferences[prefPrefix+in.Question] = clip(in.Answer, 500)
			if err := t.m.d.Settings.PutUserSettings(ctx, t.in.UserID, s); err != nil {
				return agent.Output{}, fmt.Errorf("saving your preference: %w", err)
			}
			t.settings = s
			_, _, next := interviewStatus(s)
			return agent.Output{Text: "Saved. Next question: " + orNone(next), Summary: "Saved: " + in.Question}, nil
		}, agent.WithTitle(func(in prefArgs) string { return "Saving your preference: " + in.Question }),
		agent.WithSchema(func(s *jsonschema.Schema) {
			keys := make([]any, len(interviewQuestions))
			for i, q := range interviewQuestions {
				keys[i] = q.Key
			}
			s.Properties["question"].Enum = keys
		}))
}

func orNone(s string) string {
	if s == "" {
		return "none; all questions are answered"
	}
	return s
}

// finishInterview marks the interview completed when the agent ends it.
func (m *Mode) finishInterview(ctx context.Context, t *turn) {
	if m.d.Settings == nil {
		return
	}
	s, err := m.d.Settings.UserSettings(ctx, t.in.UserID)
	if err != nil {
		return
	}
	if s.Preferences == nil {
		s.Preferences = map[string]string{}
	}
	s.Preferences[prefPrefix+"completed"] = "true"
	if m.d.Settings.PutUserSettings(ctx, t.in.UserID, s) == nil {
		t.settings = s
	}
}

// prefixed renames a sub-agent's tool-call IDs, so that IDs stay unique
// within the run when several loops run in it.
func prefixed(sink event.Sink, prefix string) event.Sink {
	return event.SinkFunc(func(e event.Event) {
		if e.ToolCall != nil {
			c := *e.ToolCall
			c.ID = prefix + c.ID
			e.ToolCall = &c
		}
		if e.ToolResult != nil {
			r := *e.ToolResult
			r.ID = prefix + r.ID
			e.ToolResult = &r
		}
		sink.Emit(e)
	})
}
