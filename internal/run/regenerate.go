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

// regenerateTarget finds the question a regenerate request answers again:
// the chat's last stored question, which must read as question. It
// answers the question's id and the conversation before it (each earlier
// question with its chosen answer).
func (s *Service) regenerateTarget(ctx context.Context, userID, chatID, question string) (string, []llm.Message, error) {
	msgs, err := s.opt.Store.ListMessages(ctx, userID, chatID)
	if err != nil {
		return "", nil, fmt.Errorf("loading chat history: %w", err)
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != llm.RoleUser {
			continue
		}
		if strings.TrimSpace(msgs[i].Content) != question {
			return "", nil, ErrNothingToRegenerate
		}
		return msgs[i].ID, historyOf(msgs[:i]), nil
	}
	return "", nil, ErrNothingToRegenerate
}

// historyOf is the conversation stored messages make for a model. A
// question answered more than once (regenerated) counts with its last
// answer only: that is the version the person sees and goes on from.
func historyOf(msgs []sova.Message) []llm.Message {
	latest := map[string]int{}
	for i, m := range msgs {
		if m.Role == llm.RoleAssistant && m.ReplyTo != "" {
			latest[m.ReplyTo] = i
		}
	}
	var out []llm.Message
	for i, m := range msgs {
		if m.Role != llm.RoleUser && m.Role != llm.RoleAssistant || m.Content == "" {
			continue
		}
		if m.Role == llm.RoleAssistant && m.ReplyTo != "" && latest[m.ReplyTo] != i {
			continue // an earlier version of a regenerated answer
		}
		out = append(out, llm.Message{Role: m.Role, Content: m.Content})
	}
	return out
}
