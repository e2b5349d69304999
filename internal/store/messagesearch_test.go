package store_test

import (
	"testing"

	"github.com/sova-ai/sova"
)

func TestSearchMessages(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := b.newDatabase(t).open(t)
			ctx := t.Context()
			chat := func(user string, msgs ...sova.Message) string {
				c := &sova.Chat{UserID: user}
				if err := s.CreateChat(ctx, c); err != nil {
					t.Fatal(err)
				}
				for _, m := range msgs {
					m.ChatID = c.ID
					if err := s.AddMessage(ctx, user, &m); err != nil {
						t.Fatal(err)
					}
				}
				return c.ID
			}
			vostok := chat("a",
				sova.Message{Role: "user", Content: "Анна писала о проекте Восток: сроки сдвигаются на март."},
				sova.Message{Role: "assistant", Content: "Записал: по проекту Восток бюджет 2 млн, проект Восток идёт с отставанием."},
				sova.Message{Role: "system", Content: "проект Восток (system messages are not searched)"},
			)
			weather := chat("a", sova.Message{Role: "user", Content: "Какая погода завтра? Budget meeting moved to Friday."})
			chat("b", sova.Message{Role: "user", Content: "Проект Восток у другого человека"})

			// A stem finds its forms; the message with the terms more often ranks first.
			got, err := s.SearchMessages(ctx, "a", []string{"проект", "восток"}, "", 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || got[0].Role != "assistant" || got[0].ChatID != vostok || got[1].Role != "user" {
				t.Fatalf("search = %+v", got)
			}
			for _, m := range got {
				if m.ID == "" || m.CreatedAt.IsZero() {
					t.Errorf("incomplete message %+v", m)
				}
			}
			// Another user's messages are never found; the chat at hand can be left out.
			if got, _ := s.SearchMessages(ctx, "b", []string{"бюджет"}, "", 10); len(got) != 0 {
				t.Errorf("b finds a's messages: %+v", got)
			}
			if got, _ := s.SearchMessages(ctx, "a", []string{"восток"}, vostok, 10); len(got) != 0 {
				t.Errorf("the excluded chat was searched: %+v", got)
			}
			// English, case-insensitively; terms with operators or quotes are harmless.
			got, err = s.SearchMessages(ctx, "a", []string{`BUDG"`, "OR", "*", "'); DROP TABLE messages; --"}, "", 10)
			if err != nil || len(got) != 1 || got[0].ChatID != weather {
				t.Fatalf("english = %+v, %v", got, err)
			}
			if got, err := s.SearchMessages(ctx, "a", []string{"", "!!"}, "", 10); err != nil || len(got) != 0 {
				t.Errorf("no terms = %+v, %v", got, err)
			}
			if got, _ := s.SearchMessages(ctx, "a", []string{"восток"}, "", 1); len(got) != 1 {
				t.Errorf("limit: %d", len(got))
			}
			// Deleting the chat removes its messages from the index.
			if err := s.DeleteChat(ctx, "a", vostok); err != nil {
				t.Fatal(err)
			}
			if got, err := s.SearchMessages(ctx, "a", []string{"восток"}, "", 10); err != nil || len(got) != 0 {
				t.Errorf("after delete = %+v, %v", got, err)
			}
		})
	}
}
