package server

import (
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/sova-ai/sova/internal/voice"
)

// voiceRoutes serve speech to text and text to speech through the model
// endpoint (voice.go); GET /api/audio says which are on, so the UI hides
// the microphone without them (and the voice mode without /v1/realtime).
func (s *Server) voiceRoutes() {
	s.handle("GET /api/audio", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{
			"transcription": s.opt.Voice.CanTranscribe(), "speech": s.opt.Voice.CanSpeak(), "voice": voiceName(s.opt.Voice),
			// The browser's voice mode talks over /v1/realtime.
			"realtime": s.opt.Realtime != nil,
		})
	})
	if s.opt.Voice == nil {
		return
	}
	s.handle("POST /api/audio/transcriptions", s.transcribe)
	s.handle("POST /api/audio/speech", s.speak)
}

func voiceName(c *voice.Client) string {
	if c == nil {
		return ""
	}
	return c.Voice()
}

func (s *Server) transcribe(w http.ResponseWriter, r *http.Request) {
	if !s.opt.Voice.CanTranscribe() {
		writeError(w, http.StatusNotFound, "invalid_request_error", "not_configured", "speech recognition is off: set SOVA_STT_MODEL")
		return
	}
	limit := s.opt.MaxAudioBytes
	if limit <= 0 {
		limit = 25 << 20
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit+64<<10)
	f, hdr, err := r.FormFile("file")
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "body_too_large", "the recording is larger than the limit of "+itoa(limit)+" bytes (SOVA_AUDIO_MAX_BYTES)")
			return
		}
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_audio", "send the recording as multipart form field \"file\"")
		return
	}
	defer f.Close()
	ct := hdr.Header.Get("Content-Type")
	if ct == "" {
		ct = "application/octet-stream"
	}
	text, err := s.opt.Voice.Transcribe(r.Context(), hdr.Filename, ct, f)
	if err != nil {
		s.upstreamFailure(w, r, err, "transcription_failed", "the transcription")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"text": text})
}

func (s *Server) speak(w http.ResponseWriter, r *http.Request) {
	if !s.opt.Voice.CanSpeak() {
		writeError(w, http.StatusNotFound, "invalid_request_error", "not_configured", "speech is off: set SOVA_TTS_MODEL")
		return
	}
	var in struct {
		Text string `json:"text"`
	}
	if !s.decode(w, r, &in) {
		return
	}
	if strings.TrimSpace(in.Text) == "" || len([]rune(in.Text)) > voice.MaxSpeechChars {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_text", "text must be 1 to 4096 characters")
		return
	}
	audio, ct, err := s.opt.Voice.Speak(r.Context(), in.Text)
	if err != nil {
		s.upstreamFailure(w, r, err, "speech_failed", "the speech")
		return
	}
	defer audio.Close()
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "no-store")
	_, _ = io.Copy(w, io.LimitReader(audio, 50<<20))
}
