// Package voice transcribes speech and speaks text through the model
// endpoint's OpenAI audio API: POST /audio/transcriptions (multipart, a
// speech-to-text model) and POST /audio/speech (JSON, a text-to-speech
// model and voice). Either is off when its model is not set.
package voice

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"time"

	"github.com/sova-ai/sova/internal/egress"
)

// Config says where and with which models.
type Config struct {
	BaseURL  string // the OpenAI-compatible endpoint, ending in /v1
	APIKey   string
	STTModel string // SOVA_STT_MODEL; "" turns transcription off
	TTSModel string // SOVA_TTS_MODEL; "" turns speech off
	Voice    string // SOVA_TTS_VOICE (sage)
	Timeout  time.Duration
}

// MaxSpeechChars bounds the text of one speech request (the OpenAI API's
// limit).
const MaxSpeechChars = 4096

// ErrOff reports a feature whose model is not configured.
var ErrOff = errors.New("voice: not configured")

// Client talks to the endpoint's audio API.
type Client struct {
	cfg  Config
	http *http.Client
}

// New returns a client.
func New(cfg Config) *Client {
	if cfg.Voice == "" {
		cfg.Voice = "sage"
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Minute
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	return &Client{cfg: cfg, http: egress.ServiceClient(cfg.Timeout, cfg.BaseURL)}
}

// CanTranscribe and CanSpeak report what is configured.
func (c *Client) CanTranscribe() bool { return c != nil && c.cfg.STTModel != "" }
func (c *Client) CanSpeak() bool      { return c != nil && c.cfg.TTSModel != "" }

// Voice is the configured voice.
func (c *Client) Voice() string { return c.cfg.Voice }

// Transcribe sends recorded audio and returns its text.
func (c *Client) Transcribe(ctx context.Context, filename, contentType string, audio io.Reader) (string, error) {
	if !c.CanTranscribe() {
		return "", ErrOff
	}
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	_ = w.WriteField("model", c.cfg.STTModel)
	_ = w.WriteField("response_format", "json")
	h := make(map[string][]string)
	h["Content-Disposition"] = []string{fmt.Sprintf(`form-data; name="file"; filename=%q`, filename)}
	h["Content-Type"] = []string{contentType}
	part, err := w.CreatePart(h)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(part, audio); err != nil {
		return "", fmt.Errorf("voice: reading the recording: %w", err)
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	resp, err := c.do(ctx, "/audio/transcriptions", w.FormDataContentType(), &body)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct {
		Text string `json:"text"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&out); err != nil {
		return "", fmt.Errorf("voice: the transcription answer is not JSON: %w", err)
	}
	return strings.TrimSpace(out.Text), nil
}

// Speak returns the audio (MP3) of text; the caller closes it.
func (c *Client) Speak(ctx context.Context, text string) (io.ReadCloser, string, error) {
	return c.SpeakAs(ctx, text, "mp3")
}

// SpeakAs returns the audio of text in format (mp3, or pcm: raw 16-bit
// little-endian mono at 24 kHz, what Realtime clients play); the caller
// closes it. The body streams as the endpoint writes it.
func (c *Client) SpeakAs(ctx context.Context, text, format string) (io.ReadCloser, string, error) {
	if !c.CanSpeak() {
		return nil, "", ErrOff
	}
	if r := []rune(text); len(r) > MaxSpeechChars {
		text = string(r[:MaxSpeechChars])
	}
	b, _ := json.Marshal(map[string]string{"model": c.cfg.TTSModel, "voice": c.cfg.Voice, "input": text, "response_format": format})
	resp, err := c.do(ctx, "/audio/speech", "application/json", bytes.NewReader(b))
	if err != nil {
		return nil, "", err
	}
	ct := resp.Header.Get("Content-Type")
	if ct == "" || strings.HasPrefix(ct, "application/json") {
		ct = "audio/mpeg"
		if format == "pcm" {
			ct = "audio/pcm"
		}
	}
	return resp.Body, ct, nil
}

func (c *Client) do(ctx context.Context, path, contentType string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.BaseURL+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", contentType)
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("voice: the endpoint did not answer %s: %w", path, errors.Unwrap(err))
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
		resp.Body.Close()
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		text := strings.TrimSpace(string(msg))
		if json.Unmarshal(msg, &e) == nil && e.Error.Message != "" {
			text = e.Error.Message
		}
		return nil, fmt.Errorf("voice: the endpoint answered %s to %s: %s", resp.Status, path, text)
	}
	return resp, nil
}
