package store_test

import (
	"errors"
	"testing"

	"github.com/sova-ai/sova"
)

func TestMCPServersAndRecentMessages(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := b.newDatabase(t).open(t)
			ctx := t.Context()
			if err := s.PutMCPServer(ctx, &sova.MCPServer{UserID: "a", Name: "mail", URL: "https://m/mcp", Headers: map[string]string{"Authorization": "Bearer x"}}); err != nil {
				t.Fatal(err)
			}
			if err := s.PutMCPServer(ctx, &sova.MCPServer{UserID: "a", Name: "mail", URL: "https://m2/mcp"}); err != nil {
				t.Fatal(err) // replaces
			}
			if err := s.PutMCPServer(ctx, &sova.MCPServer{UserID: "a", Name: "cal", URL: "https://c/mcp"}); err != nil {
				t.Fatal(err)
			}
			list, err := s.MCPServers(ctx, "a")
			if err != nil || len(list) != 2 || list[0].Name != "cal" || list[1].URL != "https://m2/mcp" || list[1].Headers != nil {
				t.Fatalf("list = %+v, %v", list, err)
			}
			if other, _ := s.MCPServers(ctx, "b"); len(other) != 0 {
				t.Errorf("user b sees %v", other)
			}
			if err := s.DeleteMCPServer(ctx, "b", "cal"); !errors.Is(err, sova.ErrNotFound) {
				t.Errorf("b deletes a's: %v", err)
			}
			if err := s.DeleteMCPServer(ctx, "a", "cal"); err != nil {
				t.Error(err)
			}
			if err := s.PutMCPServer(ctx, &sova.MCPServer{UserID: "a", Name: "x"}); !errors.Is(err, sova.ErrInvalid) {
				t.Errorf("no URL: %v", err)
			}

			for _, u := range []string{"a", "b"} {
				c := &sova.Chat{UserID: u}
				if err := s.CreateChat(ctx, c); err != nil {
					t.Fatal(err)
				}
				for _, m := range []sova.Message{{Role: "user", Content: u + " asks"}, {Role: "assistant", Content: u + " answered"}, {Role: "assistant", Content: ""}} {
					m.ChatID = c.ID
					if err := s.AddMessage(ctx, u, &m); err != nil {
						t.Fatal(err)
					}
				}
			}
			msgs, err := s.RecentMessages(ctx, "a", 10)
			if err != nil || len(msgs) != 2 || msgs[0].Content != "a answered" || msgs[1].Content != "a asks" {
				t.Fatalf("recent = %+v, %v", msgs, err)
			}
			if one, _ := s.RecentMessages(ctx, "a", 1); len(one) != 1 {
				t.Errorf("limit: %d", len(one))
			}
		})
	}
}
