package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// idFrame is one chunk of a UI message stream and the SSE id it came
// under.
type idFrame struct {
	id  int64
	typ string
}

// streamFrames sends a request with a deadline and reads its UI message
// stream to the end: the chunks with their ids, without [DONE].
func streamFrames(t *testing.T, method, url, body string, lastID int64) (http.Header, []idFrame) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if lastID > 0 {
		req.Header.Set("Last-Event-ID", fmt.Sprint(lastID))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %d", method, url, resp.StatusCode)
	}
	var out []idFrame
	var id int64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			_, _ = fmt.Sscan(strings.TrimPrefix(line, "id: "), &id)
		case strings.HasPrefix(line, "data: {"):
			var v struct{ Type string }
			_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &v)
			out = append(out, idFrame{id: id, typ: v.Type})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return resp.Header, out
}

// A run that paused for the person's answers and was answered logs a
// message per part. A client of the answered part that reconnects with
// Last-Event-ID, after the pause's finish or inside the answered part, is
// given the rest of that part to its finish; while the run still waits,
// one that had the pause's finish gets nothing more.
func TestAnsweredRunStreamResumes(t *testing.T) {
	e := newEnv(t, nil)
	script := scriptAgent(e.model)
	scriptResearch(script, e.site.URL)
	h, asked := streamFrames(t, http.MethodPost, e.srv.URL+"/api/search", `{"id":"resumed","group":"sgr_agent","messages":[{"role":"user","content":"`+agentTask+`"}]}`, 0)
	runID := h.Get("X-Run-ID")
	if len(asked) == 0 || asked[len(asked)-1].typ != "finish" {
		t.Fatalf("the question's stream: %+v", asked)
	}
	pause := asked[len(asked)-1].id
	stream := e.srv.URL + "/api/runs/" + runID + "/stream"
	if _, got := streamFrames(t, http.MethodGet, stream, "", pause); len(got) != 0 {
		t.Errorf("after the pause's finish, the waiting run streamed %+v", got)
	}

	_, answered := streamFrames(t, http.MethodPost, e.srv.URL+"/api/search", `{"id":"resumed","group":"sgr_agent","messages":[{"role":"user","content":"The US, 1930 to 1936."}]}`, 0)
	if len(answered) < 4 || answered[0].typ != "start" || answered[len(answered)-1].typ != "finish" || answered[0].id <= pause {
		t.Fatalf("the answer's stream: %+v", answered)
	}
	if _, got := streamFrames(t, http.MethodGet, stream, "", pause); len(got) != len(answered) || got[0] != answered[0] || got[len(got)-1] != answered[len(answered)-1] {
		t.Errorf("resumed after the pause's finish: %+v; want the answer's %+v", got, answered)
	}
	mid := answered[len(answered)/2].id
	if _, got := streamFrames(t, http.MethodGet, stream, "", mid); len(got) == 0 || got[0].id <= mid || got[len(got)-1].typ != "finish" {
		t.Errorf("resumed inside the answered part (after %d): %+v", mid, got)
	}
}
