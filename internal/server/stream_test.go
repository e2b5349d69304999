package server_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// Streaming a chat that does not exist is a 404 with the JSON error, not
// an empty 204.
func TestStreamOfAnUnknownChatIs404(t *testing.T) {
	e := newEnv(t, nil)
	resp, err := http.Get(e.srv.URL + "/api/chats/no-such-chat/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body apiErr
	_ = json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != http.StatusNotFound || body.Error.Code != "chat_not_found" {
		t.Errorf("unknown chat stream: %d %+v", resp.StatusCode, body)
	}
}
