package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/auth"
	"github.com/sova-ai/sova/internal/server"
	"github.com/sova-ai/sova/internal/voice"
)

// fakeAudio speaks the OpenAI audio API.
func fakeAudio(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/audio/transcriptions", func(w http.ResponseWriter, r *http.Request) {
		f, _, err := r.FormFile("file")
		if err != nil || r.FormValue("model") != "stt" {
			http.Error(w, "bad", 400)
			return
		}
		b, _ := io.ReadAll(f)
		_ = json.NewEncoder(w).Encode(map[string]string{"text": "распознано: " + string(b)})
	})
	mux.HandleFunc("POST /v1/audio/speech", func(w http.ResponseWriter, r *http.Request) {
		var in map[string]string
		_ = json.NewDecoder(r.Body).Decode(&in)
		w.Header().Set("Content-Type", "audio/mpeg")
		_, _ = w.Write([]byte("ID3:" + in["voice"] + ":" + in["input"]))
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func voiceServer(t *testing.T, v *voice.Client) *httptest.Server {
	s := httptest.NewServer(server.New(server.Options{
		Auth:  auth.Func(func(*http.Request) (sova.User, error) { return sova.User{ID: "u"}, nil }),
		Voice: v, MaxAudioBytes: 1024,
	}))
	t.Cleanup(s.Close)
	return s
}

func uploadAudio(t *testing.T, url string, data []byte) (*http.Response, string) {
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	f, _ := w.CreateFormFile("file", "rec.webm")
	_, _ = f.Write(data)
	_ = w.Close()
	resp, err := http.Post(url+"/api/audio/transcriptions", w.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestVoiceEndpoints(t *testing.T) {
	audio := fakeAudio(t)
	s := voiceServer(t, voice.New(voice.Config{BaseURL: audio.URL + "/v1", STTModel: "stt", TTSModel: "tts"}))
	resp, body := uploadAudio(t, s.URL, []byte("привет"))
	if resp.StatusCode != 200 || !strings.Contains(body, "распознано: привет") {
		t.Fatalf("transcription: %d %s", resp.StatusCode, body)
	}
	resp, body = uploadAudio(t, s.URL, bytes.Repeat([]byte("x"), 200<<10))
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("large recording: %d %s", resp.StatusCode, body)
	}
	sp, err := http.Post(s.URL+"/api/audio/speech", "application/json", strings.NewReader(`{"text":"Готово"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(sp.Body)
	sp.Body.Close()
	if sp.StatusCode != 200 || sp.Header.Get("Content-Type") != "audio/mpeg" || string(b) != "ID3:sage:Готово" {
		t.Fatalf("speech: %d %q", sp.StatusCode, b)
	}
	if sp, _ := http.Post(s.URL+"/api/audio/speech", "application/json", strings.NewReader(`{"text":""}`)); sp.StatusCode != 400 {
		t.Errorf("empty text: %d", sp.StatusCode)
	}
	get, _ := http.Get(s.URL + "/api/audio")
	b, _ = io.ReadAll(get.Body)
	get.Body.Close()
	if !strings.Contains(string(b), `"transcription":true`) || !strings.Contains(string(b), `"voice":"sage"`) {
		t.Errorf("status: %s", b)
	}
	// Without models the feature is off and says so.
	off := voiceServer(t, nil)
	get, _ = http.Get(off.URL + "/api/audio")
	b, _ = io.ReadAll(get.Body)
	get.Body.Close()
	if !strings.Contains(string(b), `"transcription":false`) || !strings.Contains(string(b), `"speech":false`) {
		t.Errorf("off status: %s", b)
	}
	if resp, _ := uploadAudio(t, off.URL, []byte("x")); resp.StatusCode != 404 {
		t.Errorf("off transcription: %d", resp.StatusCode)
	}
}
