package server_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/realtime/realtimetest"
)

// nodeTurn is one turn of test/openai-node/realtime.mjs.
type nodeTurn struct {
	Expect string         `json:"expect"`
	Decide map[string]any `json:"decide,omitempty"`
}

// nodeResult is what the script saw.
type nodeResult struct {
	ChatID string         `json:"chatId"`
	Path   string         `json:"path"`
	Types  map[string]int `json:"types"`
	Errors []string       `json:"errors"`
	Steps  int            `json:"steps"`
	Turns  []struct {
		Said                        string `json:"said"`
		Error                       string `json:"error"`
		FirstAudioMs                int    `json:"firstAudioMs"`
		Ms                          int    `json:"ms"`
		TranscriptDeltasBeforeAudio int    `json:"transcriptDeltasBeforeAudio"`
		TranscriptDeltas            int    `json:"transcriptDeltas"`
	} `json:"turns"`
	Handoffs    []string `json:"handoffs"`
	Held        []string `json:"held"`
	Transcripts []string `json:"transcripts"`
}

// runRealtimeNode runs the openai package's Realtime client against e.
func runRealtimeNode(t *testing.T, e *rtEnv, dialect string, turns []nodeTurn) nodeResult {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "test", "openai-node")
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed; install Node.js and run `npm ci --prefix test/openai-node`")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "ws")); err != nil {
		t.Skip("test/openai-node/node_modules is missing; run `npm ci --prefix test/openai-node`")
	}
	b, _ := json.Marshal(turns)
	tf := filepath.Join(t.TempDir(), "turns.json")
	if err := os.WriteFile(tf, b, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "realtime.mjs", e.rt.URL+"/v1", rtKey, dialect, tf)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("node: %v\n%s\n%s", err, out, stderr)
	}
	var res nodeResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("node printed %s: %v", out, err)
	}
	for i, tr := range res.Turns {
		if tr.Error != "" {
			t.Fatalf("turn %d (%q): %s\n%s", i+1, turns[i].Expect, tr.Error, out)
		}
	}
	if len(res.Turns) != len(turns) {
		t.Fatalf("%d of %d turns: %s", len(res.Turns), len(turns), out)
	}
	return res
}

// TestRealtimeOpenAINodeClientRunsTheSeedFlows: the official openai npm
// Realtime client, against the fake Realtime upstream, runs seed 004's
// flows 1-3 and 6 by voice: an MCP read, a hand-off to the knowledge
// agent and back, the interview, the planning agent's question, a held
// send approved by voice and one declined by its id.
func TestRealtimeOpenAINodeClientRunsTheSeedFlows(t *testing.T) {
	e := newRTEnvTLS(t, "gpt-4o-realtime-mini", true)
	up := realtimetest.NewUpstream(e.audio)
	yes := `{"to":"anna@example.com","subject":"Восток","body":"Согласен на вторник."}`
	no := `{"to":"anna@example.com","subject":"Встреча","body":"Не приду."}`
	ask := "Когда удобно: понедельник, среду или пятницу?"
	e.audio.Say("Покажи письма от Анны", "Что она писала о проекте Восток?", "Настрой помощника под меня", "Да",
		"Я руководитель проекта Восток", "Назначь встречу с ней на следующей неделе", "Ответь Анне, что я согласен", "да",
		"Напиши Анне, что я не приду")
	up.Script(
		// Flow 1.
		realtimetest.Reply{Call: "office__list_emails", Args: `{"from":"anna"}`}, realtimetest.Reply{Text: "Нашла три письма от Анны."},
		// Flow 2.
		realtimetest.Reply{Call: "transfer_to_knowledge", Args: `{"reason":"project history"}`},
		realtimetest.Reply{Call: "search_chats", Args: `{"query":"Восток"}`},
		realtimetest.Reply{Text: "В переписке о проекте Восток нашла три обсуждения."},
		// Flow 3.
		realtimetest.Reply{Call: "checkInterviewStatus", Args: `{}`},
		realtimetest.Reply{Call: "transfer_to_interview", Args: `{"reason":"personalise"}`},
		realtimetest.Reply{Text: "Могу провести короткий опрос?"},
		realtimetest.Reply{Text: "Какая у вас роль и как к вам обращаться?"},
		realtimetest.Reply{Call: "save_preference", Args: `{"question":"role","answer":"руководитель проекта Восток"}`},
		realtimetest.Reply{Call: "finish_interview", Args: `{"reason":"done"}`},
		realtimetest.Reply{Text: "Спасибо! Чем могу помочь?"},
		// Flow 6: the planning agent asks.
		realtimetest.Reply{Call: "delegateToSupervisor", Args: `{"conversationContext":"встреча с Анной","proposedPlan":"календарь","userIntent":"встреча","complexity":"medium"}`},
		realtimetest.Reply{Echo: true},
		// A held send, approved by voice.
		realtimetest.Reply{Call: "office__send_email", Args: yes}, realtimetest.Reply{Echo: true}, realtimetest.Reply{Text: "Отправила."},
		// A held send, declined by its id.
		realtimetest.Reply{Call: "office__send_email", Args: no}, realtimetest.Reply{Echo: true}, realtimetest.Reply{Text: "Хорошо, не отправляю."},
	)
	e.script(llmtest.Calls(call("p1", "finish_plan", `{"decision":"clarify","nextResponse":"`+ask+`","workflowSteps":["Проверил календарь","Нашёл свободные дни"]}`)))
	res := runRealtimeNode(t, e, "ga", []nodeTurn{
		{Expect: "три письма"}, {Expect: "три обсуждения"}, {Expect: "опрос"}, {Expect: "роль"}, {Expect: "Чем могу помочь"},
		{Expect: "понедельник"}, {Expect: "anna@example.com"}, {Expect: "Отправила"}, {Expect: "anna@example.com"},
		{Expect: "не отправляю", Decide: map[string]any{"decline": []string{agent.ActionID("office__send_email", json.RawMessage(no))}}},
	})
	if res.Path != "upstream" || len(res.Errors) > 0 {
		t.Fatalf("path %q, errors %v", res.Path, res.Errors)
	}
	if got := strings.Join(res.Handoffs, ","); got != "knowledge,router,interview,router" {
		t.Errorf("hand-offs %s", got)
	}
	if res.Turns[5].Said != ask {
		t.Errorf("nextResponse said as %q", res.Turns[5].Said)
	}
	sent := e.office.Sent()
	if len(sent) != 1 || !strings.Contains(sent[0].Body, "Согласен") {
		t.Errorf("sent %+v", sent)
	}
	if len(res.Held) < 2 || res.Types["response.output_audio.delta"] == 0 || res.Steps == 0 {
		t.Errorf("held %v, types %v, steps %d", res.Held, res.Types, res.Steps)
	}
	settings, err := e.app.Store.UserSettings(context.Background(), e.user)
	if err != nil || settings.Preferences["interview.role"] != "руководитель проекта Восток" || settings.Preferences["interview.completed"] != "true" {
		t.Errorf("preferences %v %v", settings.Preferences, err)
	}
	// The last answer is stored just after the client has heard it.
	msgs, err := e.app.Store.ListMessages(context.Background(), e.user, res.ChatID)
	for end := time.Now().Add(5 * time.Second); err == nil && (len(msgs) == 0 || msgs[len(msgs)-1].Content != "Хорошо, не отправляю.") && time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
		msgs, err = e.app.Store.ListMessages(context.Background(), e.user, res.ChatID)
	}
	if err != nil || len(msgs) < 18 {
		t.Fatalf("stored %d messages: %v", len(msgs), err)
	}
	if msgs[0].Role != "user" || msgs[0].Content != "Покажи письма от Анны" || msgs[len(msgs)-1].Content != "Хорошо, не отправляю." || msgs[1].Usage == nil {
		t.Errorf("chat: first %+v, last %+v", msgs[0], msgs[len(msgs)-1])
	}
}

// TestRealtimeOpenAINodeClientGetsTheCascade: the same client, in the beta
// dialect, against an endpoint without Realtime: the transcript, audio
// that starts before the answer is complete, and the chat stored.
func TestRealtimeOpenAINodeClientGetsTheCascade(t *testing.T) {
	e := newRTEnvTLS(t, "gpt-4o-realtime-mini", true) // the fake has no /v1/realtime: 404
	e.audio.STTLatency, e.audio.TTSFirstByte = 50*time.Millisecond, 80*time.Millisecond
	e.audio.Say("Что нового по проекту Восток?")
	e.script(llmtest.Reply{Content: "Анна предложила перенести запуск на вторник [1]. Бюджет согласован. Подробности в письме https://mail.example/x.", ChunkDelay: 60 * time.Millisecond})
	res := runRealtimeNode(t, e, "beta", []nodeTurn{{Expect: "вторник"}})
	if res.Path != "cascade" || len(res.Errors) > 0 {
		t.Fatalf("path %q, errors %v", res.Path, res.Errors)
	}
	if len(res.Transcripts) != 1 || res.Transcripts[0] != "Что нового по проекту Восток?" {
		t.Errorf("transcripts %v", res.Transcripts)
	}
	tr := res.Turns[0]
	if res.Types["response.audio.delta"] == 0 || tr.TranscriptDeltasBeforeAudio >= tr.TranscriptDeltas {
		t.Errorf("audio began after the whole answer: %+v", tr)
	}
	if strings.Contains(tr.Said, "[1]") || strings.Contains(tr.Said, "https://") {
		t.Errorf("said %q", tr.Said)
	}
	t.Logf("cascade: first audio %d ms after the commit (STT %v, the answer streamed in %v chunks, TTS first byte %v)", tr.FirstAudioMs, e.audio.STTLatency, 60*time.Millisecond, e.audio.TTSFirstByte)
	msgs, err := e.app.Store.ListMessages(context.Background(), e.user, res.ChatID)
	if err != nil || len(msgs) != 2 || !strings.Contains(msgs[1].Content, "вторник") {
		t.Fatalf("stored %+v %v", msgs, err)
	}
}
