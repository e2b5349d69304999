package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestDeepSearchOverBothAPIs asks deep_search through the OpenAI-compatible
// endpoint and the UI message stream endpoint.
func TestDeepSearchOverBothAPIs(t *testing.T) {
	e := newEnv(t, nil)
	question := "How did presidents describe the economy in the 1930s?"

	resp := e.post(t, "/v1/chat/completions", `{"model":"deep_search","messages":[{"role":"user","content":"`+question+`"}]}`)
	defer resp.Body.Close()
	var comp struct {
		Choices []struct {
			Message struct{ Content string }
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&comp); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, %v", resp.StatusCode, err)
	}
	if len(comp.Choices) != 1 || !strings.Contains(comp.Choices[0].Message.Content, "[1]") {
		t.Errorf("answer = %+v", comp)
	}
	if q := len(e.sx.Queries()); q != 13 {
		t.Errorf("%d queries, want 13 over 6 iterations", q)
	}

	resp2 := e.post(t, "/api/search", `{"group":"deep_search","messages":[{"role":"user","content":"`+question+`"}]}`)
	defer resp2.Body.Close()
	body, _ := io.ReadAll(resp2.Body)
	if resp2.StatusCode != http.StatusOK || !strings.Contains(string(body), `"iteration":6`) ||
		!strings.Contains(string(body), `"type":"finish"`) || !strings.Contains(string(body), "data: [DONE]") {
		t.Errorf("stream (%d) lacks the sixth iteration or the finish:\n%.2000s", resp2.StatusCode, body)
	}
}
