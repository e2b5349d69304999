// Package realtimetest is the outside world of voice sessions for tests:
// an endpoint's OpenAI audio API (POST /v1/audio/transcriptions and
// /v1/audio/speech) with scripted transcripts and stated latencies, and
// (upstream.go) a Realtime API speaking the event protocol over WebSocket.
package realtimetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Audio is the fake endpoint.
type Audio struct {
	*httptest.Server
	// STTLatency is waited before a transcript; TTSFirstByte before the
	// first audio byte of a speech; audio then streams at 10x real time.
	STTLatency, TTSFirstByte time.Duration

	mu          sync.Mutex
	transcripts []string
	spoken      []string
	failSTT     int // the next n transcriptions answer 500
	mux         *http.ServeMux
}

// NewAudio starts the fake audio API; its base URL is URL+"/v1".
func NewAudio(t testing.TB) *Audio {
	a := &Audio{mux: http.NewServeMux()}
	a.mux.HandleFunc("POST /v1/audio/transcriptions", a.transcribe)
	a.mux.HandleFunc("POST /v1/audio/speech", a.speech)
	a.Server = httptest.NewServer(a.mux)
	t.Cleanup(a.Close)
	return a
}

// Handle adds a route (the Realtime upstream shares the server).
func (a *Audio) Handle(pattern string, h http.Handler) { a.mux.Handle(pattern, h) }

// Say queues what the next transcriptions hear.
func (a *Audio) Say(texts ...string) {
	a.mu.Lock()
	a.transcripts = append(a.transcripts, texts...)
	a.mu.Unlock()
}

// FailSTT makes the next n transcriptions answer 500.
func (a *Audio) FailSTT(n int) {
	a.mu.Lock()
	a.failSTT = n
	a.mu.Unlock()
}

// Spoken is every text sent to the speech endpoint, in order.
func (a *Audio) Spoken() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.spoken...)
}

func (a *Audio) transcribe(w http.ResponseWriter, r *http.Request) {
	f, _, err := r.FormFile("file")
	if err != nil || r.FormValue("model") == "" {
		http.Error(w, `{"error":{"message":"file and model are required"}}`, http.StatusBadRequest)
		return
	}
	head := make([]byte, 12)
	if _, err := io.ReadFull(f, head); err != nil || string(head[:4]) != "RIFF" || string(head[8:12]) != "WAVE" {
		http.Error(w, `{"error":{"message":"not a WAV file"}}`, http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	fail := a.failSTT > 0
	if fail {
		a.failSTT--
	}
	text := ""
	if !fail && len(a.transcripts) > 0 {
		text, a.transcripts = a.transcripts[0], a.transcripts[1:]
	}
	a.mu.Unlock()
	if fail {
		http.Error(w, `{"error":{"message":"the speech model is overloaded"}}`, http.StatusInternalServerError)
		return
	}
	sleep(r, a.STTLatency)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"text": text})
}

// speech answers PCM16 at 24 kHz: 50 ms of a tone per character, the
// first byte after TTSFirstByte, the rest in 100 ms chunks.
func (a *Audio) speech(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Model, Input, Voice string
		Format              string `json:"response_format"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Model == "" || strings.TrimSpace(in.Input) == "" {
		http.Error(w, `{"error":{"message":"model and input are required"}}`, http.StatusBadRequest)
		return
	}
	if in.Format != "pcm" && in.Format != "mp3" {
		http.Error(w, fmt.Sprintf(`{"error":{"message":"unsupported format %q"}}`, in.Format), http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	a.spoken = append(a.spoken, in.Input)
	a.mu.Unlock()
	sleep(r, a.TTSFirstByte)
	w.Header().Set("Content-Type", "audio/pcm")
	n := len([]rune(in.Input)) * 2400 // 50 ms (1200 samples) a character
	chunk := make([]byte, 4800)
	for i := range chunk {
		if i%2 == 1 {
			chunk[i] = 0x10
		}
	}
	rc := http.NewResponseController(w)
	for sent := 0; sent < n; sent += len(chunk) {
		if _, err := w.Write(chunk[:min(len(chunk), n-sent)]); err != nil {
			return
		}
		_ = rc.Flush()
		if !sleep(r, 10*time.Millisecond) {
			return
		}
	}
}

func sleep(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}
