package server_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/auth"
	"github.com/sova-ai/sova/internal/limits"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/realtime"
	"github.com/sova-ai/sova/internal/realtime/realtimetest"
	"github.com/sova-ai/sova/internal/server"
	"github.com/sova-ai/sova/internal/voice"
)

// The assistant's voice mode in the browser, with Chromium's fake
// microphone playing a WAV the test writes (two utterances, then a long
// silence), against an endpoint without Realtime (the cascade, over the
// fake audio API): the person's transcript and the answer's show, its
// audio arrives, a held send is shown as the card and approved with its
// button, and the conversation is kept as a chat.
func TestBrowserVoiceMode(t *testing.T) {
	path := chromiumPath()
	if path == "" {
		t.Skip("chromium is not installed (Debian: apt-get install chromium); the UI tests drive a real headless browser")
	}
	e := newAsstEnv(t)
	audio := realtimetest.NewAudio(t)
	audio.TTSFirstByte = 20 * time.Millisecond
	audio.Say("What did Anna write about the Vostok project?", "Reply to Anna that Tuesday works")
	e.script(
		llmtest.Text("Anna wrote that the Vostok deadline moves to March [1]."),
		llmtest.Calls(call("v2", "office__send_email", `{"to":"anna@example.com","subject":"Vostok","body":"Tuesday works."}`)),
	)
	a := e.app
	vc := voice.New(voice.Config{BaseURL: audio.URL + "/v1", STTModel: "stt", TTSModel: "tts"})
	rt := realtime.New(realtime.Config{Runs: a.Service, Assistant: a.Assistant, Chats: a.Store, Voice: vc,
		Upstream: realtime.Upstream{BaseURL: audio.URL + "/v1"}})
	srv := httptest.NewServer(server.New(server.Options{Service: a.Service, Store: a.Store, Auth: testAuth(a), Version: "test",
		Assistant: a.Assistant, MCPServers: a.Store, MCPAdmin: a.MCP.Servers(), Voice: vc, Realtime: rt}))
	t.Cleanup(srv.Close)

	wav := filepath.Join(t.TempDir(), "speech.wav")
	if err := os.WriteFile(wav, speechWAV(48000, []utterance{{at: 0.5, dur: 1.2}, {at: 9, dur: 1.2}}, 70), 0o600); err != nil {
		t.Fatal(err)
	}
	tb := newTab(t, newMicBrowser(t, path, wav))
	tb.do(chromedp.EmulateViewport(1280, 1000), chromedp.Navigate(srv.URL+"/"))
	tb.media("light")
	tb.wait(`document.body.classList.contains('ready') && document.querySelectorAll('.mode-option').length >= 3`, "the page")
	// The voice mode belongs to the assistant: hidden in other modes.
	var hidden bool
	tb.eval(`document.querySelector('.voice-mode-btn').hidden`, &hidden)
	if !hidden {
		t.Error("the voice mode button shows outside the assistant mode")
	}
	tb.do(chromedp.Click(css("#mode-btn")), chromedp.Click(css(`.mode-option[data-mode="assistant"]`)))
	tb.wait(`document.querySelector('#mode-btn').dataset.mode === 'assistant' && !document.querySelector('.voice-mode-btn').hidden`, "the voice mode button")

	tb.do(chromedp.Click(css(".voice-mode-btn")))
	tb.wait(`[...document.querySelectorAll('.voice-mode .vm-user .vm-text')].some(x => x.textContent === 'What did Anna write about the Vostok project?')`, "the person's transcript")
	tb.wait(`[...document.querySelectorAll('.voice-mode .vm-assistant .vm-text')].some(x => x.textContent.includes('moves to March'))`, "the answer's transcript")
	tb.wait(`+document.querySelector('.voice-mode').dataset.audioBytes > 0`, "the answer's audio")
	var said string
	tb.eval(`document.querySelector('.voice-mode .vm-assistant .vm-text').textContent`, &said)
	if strings.Contains(said, "[1]") {
		t.Errorf("the spoken transcript has a citation marker: %q", said)
	}

	// The second utterance asks for a send: held, shown as the card.
	tb.wait(`!!document.querySelector('.voice-mode .asst-confirm .asst-yes')`, "the held send's card")
	var card string
	tb.eval(`document.querySelector('.voice-mode .asst-confirm').innerText`, &card)
	for _, want := range []string{"anna@example.com", "Vostok", "Tuesday works."} {
		if !strings.Contains(card, want) {
			t.Errorf("the card lacks %q: %q", want, card)
		}
	}
	if len(e.office.Sent()) != 0 {
		t.Fatal("sent before the approval")
	}
	tb.screenshot("voice-mode-confirmation")
	e.script(llmtest.Text("I sent Anna your reply."))
	tb.do(chromedp.Click(css(".voice-mode .asst-confirm .asst-yes")))
	tb.wait(`[...document.querySelectorAll('.voice-mode .vm-assistant .vm-text')].some(x => x.textContent.includes('sent Anna'))`, "the answer after the approval")
	if len(e.office.Sent()) != 1 {
		t.Errorf("sent %d mails after the approval, want 1", len(e.office.Sent()))
	}
	tb.screenshot("voice-mode")

	var chatID string
	tb.eval(`document.querySelector('.voice-mode').dataset.chat || ''`, &chatID)
	tb.do(chromedp.Click(css(".voice-mode .vm-stop")))
	tb.wait(`document.querySelector('.voice-mode').dataset.state === 'ended' && !document.querySelector('.voice-mode-btn').classList.contains('on')`, "the conversation ended")
	if chatID == "" {
		t.Fatal("the session named no chat")
	}
	tb.wait(`[...document.querySelectorAll('.chat-item')].some(x => x.dataset.id === `+jsString(chatID)+`)`, "the voice chat in the sidebar")
	msgs, err := a.Store.ListMessages(context.Background(), e.user, chatID)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, m := range msgs {
		kept = append(kept, m.Role+": "+m.Content)
	}
	all := strings.Join(kept, "\n")
	for _, want := range []string{"user: What did Anna write about the Vostok project?", "moves to March", "user: Reply to Anna that Tuesday works", "I sent Anna your reply."} {
		if !strings.Contains(all, want) {
			t.Errorf("the stored chat lacks %q:\n%s", want, all)
		}
	}
}

// A refused microphone is said plainly, and nothing is left running.
func TestBrowserVoiceModeNoMicrophone(t *testing.T) {
	path := chromiumPath()
	if path == "" {
		t.Skip("chromium is not installed (Debian: apt-get install chromium); the UI tests drive a real headless browser")
	}
	e := newAsstEnv(t)
	audio := realtimetest.NewAudio(t)
	a := e.app
	vc := voice.New(voice.Config{BaseURL: audio.URL + "/v1", STTModel: "stt", TTSModel: "tts"})
	rt := realtime.New(realtime.Config{Runs: a.Service, Assistant: a.Assistant, Chats: a.Store, Voice: vc})
	srv := httptest.NewServer(server.New(server.Options{Service: a.Service, Store: a.Store, Auth: testAuth(a), Version: "test",
		Assistant: a.Assistant, Voice: vc, Realtime: rt}))
	t.Cleanup(srv.Close)
	// The shared browser has no fake microphone. The tab may run axe-core
	// (the panel is checked too when it is installed).
	tb := axeTab(t, newBrowser(t))
	tb.do(chromedp.EmulateViewport(1280, 1000), chromedp.Navigate(srv.URL+"/"))
	tb.wait(`document.body.classList.contains('ready') && document.querySelectorAll('.mode-option').length >= 3`, "the page")
	tb.do(chromedp.Click(css("#mode-btn")), chromedp.Click(css(`.mode-option[data-mode="assistant"]`)))
	tb.wait(`!document.querySelector('.voice-mode-btn').hidden`, "the voice mode button")
	tb.eval(`Object.defineProperty(navigator.mediaDevices, 'getUserMedia', {configurable: true,
		value: async () => { throw new DOMException('Permission denied', 'NotAllowedError'); }}), true`, nil)
	tb.do(chromedp.Click(css(".voice-mode-btn")))
	tb.wait(`document.querySelector('.voice-mode') && document.querySelector('.voice-mode').dataset.state === 'ended'`, "the conversation refused")
	var msg string
	tb.eval(`document.querySelector('.voice-mode .vm-error').innerText`, &msg)
	if !strings.Contains(msg, "Microphone access was refused") {
		t.Errorf("error shown: %q", msg)
	}
	tb.screenshot("voice-mode-no-mic")
	// The panel, its error included, and the composer with the voice
	// mode's button fit a 360 px phone.
	tb.do(chromedp.EmulateViewport(360, 780, chromedp.EmulateScale(2), chromedp.EmulateMobile))
	tb.eval(`new Promise(r => requestAnimationFrame(() => r(true)))`, nil)
	var fits bool
	tb.eval(`(() => { const box = document.querySelector('.composer-box').getBoundingClientRect();
		return document.documentElement.scrollWidth <= innerWidth &&
			[...document.querySelectorAll('.voice-mode *')].every(el => el.getBoundingClientRect().right <= innerWidth + 1) &&
			[...document.querySelectorAll('.composer-bar > *')].filter(el => el.checkVisibility()).every(el => el.getBoundingClientRect().right <= box.right + 1); })()`, &fits)
	if !fits {
		t.Error("the voice panel or the composer's buttons overflow a 360 px phone")
	}
	tb.screenshot("voice-mode-phone")
	_, file, _, _ := runtime.Caller(0)
	if src, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "test", "axe", "node_modules", "axe-core", "axe.min.js")); err == nil {
		tb.axe(string(src), "the voice mode's panel")
	} else {
		t.Logf("the panel is not checked with axe-core (npm ci --prefix test/axe): %v", err)
	}
}

// A server without a speech-to-text model says so in the panel when the
// person has spoken, in words that name what to set.
func TestBrowserVoiceModeWithoutSpeechModel(t *testing.T) {
	path := chromiumPath()
	if path == "" {
		t.Skip("chromium is not installed (Debian: apt-get install chromium); the UI tests drive a real headless browser")
	}
	e := newAsstEnv(t)
	audio := realtimetest.NewAudio(t)
	a := e.app
	vc := voice.New(voice.Config{BaseURL: audio.URL + "/v1"}) // neither model set
	rt := realtime.New(realtime.Config{Runs: a.Service, Assistant: a.Assistant, Chats: a.Store, Voice: vc})
	srv := httptest.NewServer(server.New(server.Options{Service: a.Service, Store: a.Store, Auth: testAuth(a), Version: "test",
		Assistant: a.Assistant, Voice: vc, Realtime: rt}))
	t.Cleanup(srv.Close)
	wav := filepath.Join(t.TempDir(), "speech.wav")
	if err := os.WriteFile(wav, speechWAV(48000, []utterance{{at: 0.5, dur: 1.2}}, 60), 0o600); err != nil {
		t.Fatal(err)
	}
	tb := newTab(t, newMicBrowser(t, path, wav))
	tb.do(chromedp.EmulateViewport(1280, 1000), chromedp.Navigate(srv.URL+"/"))
	tb.wait(`document.body.classList.contains('ready') && document.querySelectorAll('.mode-option').length >= 3`, "the page")
	tb.do(chromedp.Click(css("#mode-btn")), chromedp.Click(css(`.mode-option[data-mode="assistant"]`)))
	tb.wait(`!document.querySelector('.voice-mode-btn').hidden`, "the voice mode button")
	tb.do(chromedp.Click(css(".voice-mode-btn")))
	tb.wait(`!document.querySelector('.voice-mode .vm-error').hidden`, "the error")
	var msg string
	tb.eval(`document.querySelector('.voice-mode .vm-error').innerText`, &msg)
	if !strings.Contains(msg, "could not be transcribed") || !strings.Contains(msg, "SOVA_STT_MODEL") {
		t.Errorf("error shown: %q", msg)
	}
	tb.screenshot("voice-mode-no-stt")
	tb.do(chromedp.Click(css(".voice-mode .vm-stop")))
	tb.wait(`document.querySelector('.voice-mode').dataset.state === 'ended'`, "the conversation ended")
}

// newMicBrowser starts a Chromium of the test's own whose fake microphone
// plays wav: the flags that choose the capture file hold for a whole
// process, so the shared browser cannot take them.
func newMicBrowser(t *testing.T, path, wav string) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("use-fake-ui-for-media-stream", true), chromedp.Flag("use-fake-device-for-media-stream", true),
		chromedp.Flag("use-file-for-fake-audio-capture", wav),
		chromedp.Flag("autoplay-policy", "no-user-gesture-required"),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 1000),
	}
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("starting chromium with a fake microphone: %v", err)
	}
	return bctx
}

// utterance is a stretch of speech-like sound: at and dur in seconds.
type utterance struct{ at, dur float64 }

// speechWAV is a mono PCM16 WAV of total seconds at rate: silence but for
// the utterances, each a voiced sound (a 140 Hz fundamental with its
// harmonics, its loudness moving at syllable pace) that the server's voice
// activity detection hears as speech and noise suppression keeps.
func speechWAV(rate int, parts []utterance, total float64) []byte {
	n := int(total * float64(rate))
	pcm := make([]int16, n)
	for _, u := range parts {
		from, to := int(u.at*float64(rate)), int((u.at+u.dur)*float64(rate))
		for i := from; i < to && i < n; i++ {
			x := float64(i-from) / float64(rate)
			env := 0.55 + 0.45*math.Sin(2*math.Pi*4*x)
			var v float64
			for k := 1; k <= 8; k++ {
				v += math.Sin(2*math.Pi*140*float64(k)*x) / float64(k)
			}
			pcm[i] = int16(9000 * env * v / 2.7)
		}
	}
	var b bytes.Buffer
	b.WriteString("RIFF")
	_ = binary.Write(&b, binary.LittleEndian, uint32(36+2*n))
	b.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(rate), uint32(2 * rate), uint16(2), uint16(16)} {
		_ = binary.Write(&b, binary.LittleEndian, v)
	}
	b.WriteString("data")
	_ = binary.Write(&b, binary.LittleEndian, uint32(2*n))
	_ = binary.Write(&b, binary.LittleEndian, pcm)
	return b.Bytes()
}

// The voice mode against an endpoint with a Realtime model: Sova holds the
// upstream session (the fake, with its own server VAD) and runs the
// model's function calls itself. The fake microphone says three things:
// a question the model hands to the knowledge agent, which searches the
// person's chats; a request answered at length; and, while that answer
// plays, a word that interrupts it. The page shows both sides' words as
// they come and the hand-off and tool steps, stops the answer's audio
// when the person speaks over it; the chat keeps every turn, and each turn
// counts against the person's daily messages.
func TestBrowserVoiceModeUpstream(t *testing.T) {
	path := chromiumPath()
	if path == "" {
		t.Skip("chromium is not installed (Debian: apt-get install chromium); the UI tests drive a real headless browser")
	}
	start := time.Now()
	e := newAsstEnv(t)
	audio := realtimetest.NewAudio(t)
	up := realtimetest.NewUpstream(audio)
	a := e.app
	// A person of her own with a daily message limit, so that her turns
	// are counted (the local user of an installation without accounts
	// has no limits).
	vera := sova.User{ID: "voice-vera-upstream", Name: "Vera", Role: sova.RoleFree}
	lim := limits.New(limits.Config{Free: limits.Quota{Messages: 20}}, limits.StoreCounter{Store: a.Store})
	vc := voice.New(voice.Config{BaseURL: audio.URL + "/v1", STTModel: "stt", TTSModel: "tts"})
	rt := realtime.New(realtime.Config{Runs: a.Service, Assistant: a.Assistant, Chats: a.Store, Voice: vc, Limiter: lim,
		Upstream: realtime.Upstream{BaseURL: audio.URL + "/v1", Model: "gpt-4o-realtime-mini"}})
	srv := httptest.NewServer(server.New(server.Options{Service: a.Service, Store: a.Store, Version: "test", Limits: lim,
		Auth:      auth.Func(func(*http.Request) (sova.User, error) { return vera, nil }),
		Assistant: a.Assistant, MCPServers: a.Store, MCPAdmin: a.MCP.Servers(), Voice: vc, Realtime: rt}))
	t.Cleanup(srv.Close)

	const (
		ask      = "What did Anna write about the Vostok project?"
		answer   = "Anna wrote that the Vostok deadline moves to March."
		readMail = "Tell me everything about my week"
		stopIt   = "Stop"
		stopped  = "Okay, I will stop there."
	)
	// The long answer speaks a word every 200 ms with as much audio, for
	// 12 seconds: the third utterance falls well inside it.
	long := strings.TrimSpace(strings.Repeat("Monday has the planning meeting and the budget review with Ivan. ", 6)) + " That is all for Friday."
	audio.Say(ask, readMail, stopIt)
	up.Script(
		realtimetest.Reply{Call: "transfer_to_knowledge", Args: `{"reason":"what Anna wrote"}`},
		realtimetest.Reply{Call: "search_chats", Args: `{"query":"Vostok"}`},
		realtimetest.Reply{Text: answer},
		realtimetest.Reply{Text: long, Pace: 200 * time.Millisecond},
		realtimetest.Reply{Text: stopped},
	)

	// The audio reaches the server only once the socket is open (Sova has
	// dialled the upstream by then), so the first utterance comes 2 s in;
	// the second 5 s after it, when the first turn is long answered.
	wav := filepath.Join(t.TempDir(), "speech.wav")
	if err := os.WriteFile(wav, speechWAV(48000, []utterance{{at: 2, dur: 1.2}, {at: 9, dur: 1.2}, {at: 15, dur: 1}}, 90), 0o600); err != nil {
		t.Fatal(err)
	}
	tb := newTab(t, newMicBrowser(t, path, wav))
	tb.do(chromedp.EmulateViewport(1280, 1000), chromedp.Navigate(srv.URL+"/"))
	tb.wait(`document.body.classList.contains('ready') && document.querySelectorAll('.mode-option').length >= 3`, "the page")
	tb.do(chromedp.Click(css("#mode-btn")), chromedp.Click(css(`.mode-option[data-mode="assistant"]`)))
	tb.wait(`document.querySelector('#mode-btn').dataset.mode === 'assistant' && !document.querySelector('.voice-mode-btn').hidden`, "the voice mode button")
	// Counts the answer's audio sources the page stops before their end.
	tb.eval(`(() => { const stop = AudioBufferSourceNode.prototype.stop; window.vmStopped = 0;
		AudioBufferSourceNode.prototype.stop = function (...args) { window.vmStopped++; return stop.apply(this, args); }; return true; })()`, nil)
	tb.do(chromedp.Click(css(".voice-mode-btn")))

	// Turn 1: the transcript, the hand-off and the knowledge agent's
	// search as steps, then its answer with its audio.
	tb.wait(`[...document.querySelectorAll('.voice-mode .vm-user .vm-text')].some(x => x.textContent === `+jsString(ask)+`)`, "the person's transcript")
	tb.wait(`[...document.querySelectorAll('.voice-mode .vm-assistant .vm-text')].some(x => x.textContent === `+jsString(answer)+`)`, "the knowledge agent's answer")
	tb.wait(`+document.querySelector('.voice-mode').dataset.audioBytes > 0`, "the answer's audio")
	var steps string
	tb.eval(`document.querySelector('.voice-mode .vm-steps').innerText`, &steps)
	for _, want := range []string{"Knowledge agent", "Searching your past chats"} {
		if !strings.Contains(steps, want) {
			t.Errorf("the steps lack %q:\n%s", want, steps)
		}
	}
	// A step's title is shown as it is, not as "Uses <title>".
	if strings.Contains(steps, "Uses Searching") || strings.Contains(steps, "Uses Handing") {
		t.Errorf("a titled step reads as a tool name:\n%s", steps)
	}
	// The page leaves turns to the server: Sova asks the upstream for its
	// voice detection, which also cancels an answer the person speaks over.
	if ss := up.Sessions(); len(ss) == 0 || ss[0].Audio.Input.TurnDetection == nil || ss[0].Audio.Input.TurnDetection.Type != "server_vad" ||
		ss[0].Audio.Input.TurnDetection.InterruptResponse == nil || !*ss[0].Audio.Input.TurnDetection.InterruptResponse {
		t.Errorf("the upstream session's turn detection: %+v", ss)
	}
	if frames, n := up.Appended(); frames < 10 || n == 0 || n%2 != 0 {
		t.Errorf("the upstream got %d input_audio_buffer.append events with %d bytes, want PCM16 as it comes", frames, n)
	}

	// Turn 2: the long answer shows word by word while its audio plays.
	tb.wait(`[...document.querySelectorAll('.voice-mode .vm-user .vm-text')].some(x => x.textContent === `+jsString(readMail)+`)`, "the second transcript")
	tb.wait(`[...document.querySelectorAll('.voice-mode .vm-assistant .vm-text')].some(x => x.textContent.startsWith('Monday has the planning'))`, "the long answer's first words")
	var live struct {
		Said  string
		State string
	}
	tb.eval(`(() => { const l = [...document.querySelectorAll('.voice-mode .vm-assistant .vm-text')].pop();
		return {said: l.textContent, state: document.querySelector('.voice-mode').dataset.state}; })()`, &live)
	if live.Said == long || live.State != "speaking" {
		t.Errorf("the long answer is not shown as it is spoken: state %q, shown %q", live.State, live.Said)
	}

	// Turn 3: speaking over it cancels it upstream and stops its audio.
	tb.wait(`[...document.querySelectorAll('.voice-mode .vm-user .vm-text')].some(x => x.textContent === `+jsString(stopIt)+`)`, "the interruption's transcript")
	tb.wait(`[...document.querySelectorAll('.voice-mode .vm-assistant .vm-text')].some(x => x.textContent === `+jsString(stopped)+`)`, "the answer to the interruption")
	if c := up.Cancels(); len(c) != 1 || c[0] != "turn_detected" {
		t.Errorf("the upstream's cancelled responses: %q, want the long answer's, by the person's speech", c)
	}
	var stoppedSources int
	tb.eval(`window.vmStopped`, &stoppedSources)
	if stoppedSources == 0 {
		t.Error("the page did not stop the answer's audio when the person spoke over it")
	}
	var cut string
	tb.eval(`[...document.querySelectorAll('.voice-mode .vm-assistant .vm-text')].find(x => x.textContent.startsWith('Monday')).textContent`, &cut)
	if strings.Contains(cut, "Friday") {
		t.Errorf("the interrupted answer went on to its end: %q", cut)
	}
	if n := up.SpeechStarts(); n != 3 {
		t.Errorf("the upstream's voice detection heard %d utterances, want 3", n)
	}
	tb.screenshot("voice-mode-upstream")

	var chatID string
	tb.eval(`document.querySelector('.voice-mode').dataset.chat || ''`, &chatID)
	tb.do(chromedp.Click(css(".voice-mode .vm-stop")))
	tb.wait(`document.querySelector('.voice-mode').dataset.state === 'ended'`, "the conversation ended")
	if chatID == "" {
		t.Fatal("the session named no chat")
	}
	tb.wait(`[...document.querySelectorAll('.chat-item')].some(x => x.dataset.id === `+jsString(chatID)+`)`, "the voice chat in the sidebar")
	// Opened again, the chat shows each turn with its answer (a response
	// that only called functions is no answer of its own).
	tb.do(chromedp.Click(css(`.chat-item[data-id=` + jsString(chatID) + `]`)))
	tb.wait(`document.querySelector('#thread').innerText.includes(`+jsString(answer)+`) && document.querySelector('#thread').innerText.includes(`+jsString(stopped)+`)`, "the voice chat's answers in the thread")

	// The chat, as the API gives it: every turn, the interrupted answer
	// as far as it was said, the steps with the knowledge agent's answer.
	var chat struct {
		Chat     struct{ Mode string }
		Messages []struct {
			Role, Content, FinishReason string
			ToolCalls                   json.RawMessage
			Usage                       *sova.Usage
		}
	}
	if code := getJSON(t, srv.URL+"/api/chats/"+chatID, &chat); code != http.StatusOK {
		t.Fatalf("GET /api/chats/%s: %d", chatID, code)
	}
	var kept []string
	for _, m := range chat.Messages {
		kept = append(kept, m.Role+": "+m.Content)
	}
	all := strings.Join(kept, "\n")
	if chat.Chat.Mode != "assistant" || len(chat.Messages) != 6 {
		t.Errorf("the chat (mode %q) has %d messages, want 6:\n%s", chat.Chat.Mode, len(chat.Messages), all)
	}
	for _, want := range []string{"user: " + ask, "assistant: " + answer, "user: " + readMail, "assistant: Monday has the planning", "user: " + stopIt, "assistant: " + stopped} {
		if !strings.Contains(all, want) {
			t.Errorf("the stored chat lacks %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "Friday") {
		t.Errorf("the stored chat has the interrupted answer's unsaid end:\n%s", all)
	}
	for _, m := range chat.Messages {
		switch {
		case m.Content == answer:
			if !strings.Contains(string(m.ToolCalls), "search_chats") || !strings.Contains(string(m.ToolCalls), "transfer_to_knowledge") {
				t.Errorf("the knowledge agent's answer is kept without the hand-off and the search: %s", m.ToolCalls)
			}
			// Its two function calls (110 tokens each) and itself (240).
			if m.Usage == nil || m.Usage.TotalTokens != 460 {
				t.Errorf("the answer's tokens: %+v, want the turn's three responses' 460", m.Usage)
			}
		case strings.HasPrefix(m.Content, "Monday"):
			if m.FinishReason != "cancelled" {
				t.Errorf("the interrupted answer is kept as finished (%q)", m.FinishReason)
			}
		}
	}

	// Three turns, three of her daily messages, as GET /api/me says.
	var me struct {
		Usage struct{ Messages struct{ Used, Limit int64 } }
	}
	if code := getJSON(t, srv.URL+"/api/me", &me); code != http.StatusOK {
		t.Fatalf("GET /api/me: %d", code)
	}
	if me.Usage.Messages.Used != 3 || me.Usage.Messages.Limit != 20 {
		t.Errorf("usage after three turns: %+v", me.Usage.Messages)
	}
	// The sidebar says so too, without a reload.
	tb.wait(`document.querySelector('#account-usage')?.textContent.startsWith('17 of 20')`, "the sidebar's usage line after the voice turns")
	if n := up.Pending(); n != 0 {
		t.Errorf("%d scripted replies were not asked for", n)
	}
	t.Logf("the upstream voice conversation took %v", time.Since(start).Round(time.Second))
}
