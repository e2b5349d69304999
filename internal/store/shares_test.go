package store_test

import (
	"errors"
	"testing"

	"github.com/sova-ai/sova"
)

// A share link opens its chat until it is revoked or the chat deleted;
// only the chat's owner adds, lists and revokes links to it.
func TestShareLinks(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			s := b.newDatabase(t).open(t)
			ctx := t.Context()
			chat := &sova.Chat{UserID: "ann", Title: "shared"}
			if err := s.CreateChat(ctx, chat); err != nil {
				t.Fatal(err)
			}
			if err := s.AddShareLink(ctx, &sova.ShareLink{ID: "h-bob", ChatID: chat.ID, UserID: "bob"}, 0); !errors.Is(err, sova.ErrNotFound) {
				t.Fatalf("bob shared ann's chat: %v", err)
			}
			for _, id := range []string{"h1", "h2"} {
				if err := s.AddShareLink(ctx, &sova.ShareLink{ID: id, ChatID: chat.ID, UserID: "ann"}, 0); err != nil {
					t.Fatal(err)
				}
			}
			l, err := s.ShareLink(ctx, "h1")
			if err != nil || l.ChatID != chat.ID || l.UserID != "ann" || l.CreatedAt.IsZero() {
				t.Fatalf("link h1: %+v %v", l, err)
			}
			if got, err := s.ShareLinks(ctx, "bob", chat.ID); err != nil || len(got) != 0 {
				t.Errorf("bob lists %v %v", got, err)
			}
			if err := s.DeleteShareLink(ctx, "bob", chat.ID, "h1"); !errors.Is(err, sova.ErrNotFound) {
				t.Errorf("bob revoked ann's link: %v", err)
			}
			if err := s.DeleteShareLink(ctx, "ann", chat.ID, "h1"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.ShareLink(ctx, "h1"); !errors.Is(err, sova.ErrNotFound) {
				t.Errorf("revoked link still opens: %v", err)
			}
			if got, err := s.ShareLinks(ctx, "ann", chat.ID); err != nil || len(got) != 1 || got[0].ID != "h2" {
				t.Errorf("ann's links %v %v", got, err)
			}
			if err := s.DeleteChat(ctx, "ann", chat.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := s.ShareLink(ctx, "h2"); !errors.Is(err, sova.ErrNotFound) {
				t.Errorf("a deleted chat's link still opens: %v", err)
			}
		})
	}
}

// A cap on one person's live links counts all their chats; at the cap a
// new link is ErrLimit and not stored, and revoking one makes room.
func TestShareLinksCap(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			s := b.newDatabase(t).open(t)
			ctx := t.Context()
			var chats []*sova.Chat
			for _, title := range []string{"one", "two"} {
				c := &sova.Chat{UserID: "ann", Title: title}
				if err := s.CreateChat(ctx, c); err != nil {
					t.Fatal(err)
				}
				chats = append(chats, c)
			}
			other := &sova.Chat{UserID: "bob", Title: "bob's"}
			if err := s.CreateChat(ctx, other); err != nil {
				t.Fatal(err)
			}
			if err := s.AddShareLink(ctx, &sova.ShareLink{ID: "b1", ChatID: other.ID, UserID: "bob"}, 2); err != nil {
				t.Fatal(err)
			}
			for i, id := range []string{"a1", "a2"} {
				if err := s.AddShareLink(ctx, &sova.ShareLink{ID: id, ChatID: chats[i].ID, UserID: "ann"}, 2); err != nil {
					t.Fatalf("link %s under the cap: %v", id, err)
				}
			}
			if err := s.AddShareLink(ctx, &sova.ShareLink{ID: "a3", ChatID: chats[0].ID, UserID: "ann"}, 2); !errors.Is(err, sova.ErrLimit) {
				t.Fatalf("a third link with a cap of 2: %v", err)
			}
			if _, err := s.ShareLink(ctx, "a3"); !errors.Is(err, sova.ErrNotFound) {
				t.Errorf("the refused link was kept: %v", err)
			}
			if err := s.DeleteShareLink(ctx, "ann", chats[1].ID, "a2"); err != nil {
				t.Fatal(err)
			}
			if err := s.AddShareLink(ctx, &sova.ShareLink{ID: "a3", ChatID: chats[0].ID, UserID: "ann"}, 2); err != nil {
				t.Fatalf("a link after one was revoked: %v", err)
			}
		})
	}
}
