package voice_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sova-ai/sova/internal/voice"
)

// audioServer speaks the OpenAI audio API: multipart transcriptions and
// JSON speech, checking the key, model and voice.
func audioServer(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/audio/transcriptions", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, `{"error":{"message":"bad key"}}`, http.StatusUnauthorized)
			return
		}
		f, hdr, err := r.FormFile("file")
		if err != nil || r.FormValue("model") != "whisper-1" {
			http.Error(w, `{"error":{"message":"no file or model"}}`, http.StatusBadRequest)
			return
		}
		b, _ := io.ReadAll(f)
		_ = json.NewEncoder(w).Encode(map[string]string{"text": " heard " + hdr.Filename + " " + string(b) + " "})
	})
	mux.HandleFunc("POST /v1/audio/speech", func(w http.ResponseWriter, r *http.Request) {
		var in map[string]string
		_ = json.NewDecoder(r.Body).Decode(&in)
		if in["model"] != "tts-1" || in["voice"] != "sage" || in["input"] == "" {
			http.Error(w, `{"error":{"message":"bad speech request"}}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "audio/mpeg")
		_, _ = w.Write([]byte("ID3" + in["input"]))
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func TestTranscribeAndSpeak(t *testing.T) {
	s := audioServer(t)
	c := voice.New(voice.Config{BaseURL: s.URL + "/v1", APIKey: "k", STTModel: "whisper-1", TTSModel: "tts-1"})
	text, err := c.Transcribe(t.Context(), "rec.webm", "audio/webm", strings.NewReader("привет"))
	if err != nil || text != "heard rec.webm привет" {
		t.Fatalf("transcribe = %q, %v", text, err)
	}
	r, ct, err := c.Speak(t.Context(), "Готово")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	r.Close()
	if ct != "audio/mpeg" || string(b) != "ID3Готово" {
		t.Fatalf("speak = %q %q", ct, b)
	}
	bad := voice.New(voice.Config{BaseURL: s.URL + "/v1", APIKey: "wrong", STTModel: "whisper-1"})
	if _, err := bad.Transcribe(t.Context(), "a.webm", "audio/webm", strings.NewReader("x")); err == nil || !strings.Contains(err.Error(), "bad key") {
		t.Errorf("bad key: %v", err)
	}
	off := voice.New(voice.Config{BaseURL: s.URL + "/v1"})
	if off.CanTranscribe() || off.CanSpeak() {
		t.Error("voice on without models")
	}
	if _, err := off.Transcribe(t.Context(), "a", "b", strings.NewReader("")); err != voice.ErrOff {
		t.Errorf("off: %v", err)
	}
}
