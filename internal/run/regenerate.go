package run

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sova-ai/sova"
	"github.com/sova-ai/sova/internal/llm"
)

// ErrNothingToRegenerate is a regenerate request whose question is not the
// chat's last stored question.
var ErrNothingToRegenerate = errors.New("nothing to regenerate: the question must be the chat's last stored question")

// lastQuestion finds the chat's last stored question, which a regenerate
// request answers again (it must then read as question) and an edit
// request rewrites. It answers the question's id and the conversation
// before it (each earlier question in its newest version, with its newest
// answer).
func (s *Service) lastQuestion(ctx context.Context, userID, chatID, question string, regenerate bool) (string, []llm.Message, error) {
	msgs, err := s.opt.Store.ListMessages(ctx, userID, chatID)
	if err != nil {
		return "", nil, fmt.Errorf("loading chat history: %w", err)
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != llm.RoleUser {
			continue
		}
		if regenerate && strings.TrimSpace(msgs[i].Content) != question {
			return "", nil, ErrNothingToRegenerate
		}
		return msgs[i].ID, historyOf(msgs[:i]), nil
	}
	return "", nil, ErrNothingToRegenerate
}

// CurrentVersions is the conversation as the person sees it: a question
// answered more than once (regenerated) with its last answer only, and a
// question edited since (a later question whose replyTo is it) left out
// with its answers.
func CurrentVersions(msgs []sova.Message) []sova.Message {
	latest := map[string]int{}
	edited := map[string]bool{}
	for i, m := range msgs {
		switch {
		case m.Role == llm.RoleAssistant && m.ReplyTo != "":
			latest[m.ReplyTo] = i
		case m.Role == llm.RoleUser && m.ReplyTo != "":
			edited[m.ReplyTo] = true
		}
	}
	var out []sova.Message
	for i, m := range msgs {
		if m.Role == llm.RoleUser && edited[m.ID] {
			continue // a question edited since
		}
		if m.Role == llm.RoleAssistant && m.ReplyTo != "" && (latest[m.ReplyTo] != i || edited[m.ReplyTo]) {
			continue // an earlier version of an answer, or an answer to an edited question
		}
		out = append(out, m)
	}
	return out
}

// historyOf is the conversation stored messages make for a model: the
// current versions (the newest are what the person sees and goes on from).
func historyOf(msgs []sova.Message) []llm.Message {
	var out []llm.Message
	for _, m := range CurrentVersions(msgs) {
		if (m.Role == llm.RoleUser || m.Role == llm.RoleAssistant) && m.Content != "" {
			out = append(out, llm.Message{Role: m.Role, Content: m.Content})
		}
	}
	return out
}
