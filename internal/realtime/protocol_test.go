package realtime

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

func TestParseClientEvent(t *testing.T) {
	for _, tt := range []struct {
		name, in, code string
	}{
		{"append", `{"type":"input_audio_buffer.append","audio":"AAAA"}`, ""},
		{"append without audio", `{"type":"input_audio_buffer.append"}`, "invalid_audio"},
		{"append not base64", `{"type":"input_audio_buffer.append","audio":"%%"}`, "invalid_audio"},
		{"commit", `{"type":"input_audio_buffer.commit"}`, ""},
		{"clear", `{"type":"input_audio_buffer.clear"}`, ""},
		{"session GA", `{"type":"session.update","session":{"type":"realtime","audio":{"input":{"turn_detection":null}}}}`, ""},
		{"session missing", `{"type":"session.update"}`, "missing_session"},
		{"user text", `{"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}`, ""},
		{"bad role", `{"type":"conversation.item.create","item":{"type":"message","role":"robot"}}`, "invalid_item"},
		{"output without call", `{"type":"conversation.item.create","item":{"type":"function_call_output","output":"x"}}`, "invalid_item"},
		{"unknown item", `{"type":"conversation.item.create","item":{"type":"image"}}`, "invalid_item"},
		{"no item", `{"type":"conversation.item.create"}`, "missing_item"},
		{"response", `{"type":"response.create","response":{"instructions":"x"}}`, ""},
		{"cancel", `{"type":"response.cancel"}`, ""},
		{"decide", `{"type":"sova.decide","approve":["act_1"]}`, ""},
		{"unknown", `{"type":"transcription_session.update"}`, "unknown_event"},
		{"no type", `{"audio":"AAAA"}`, "missing_type"},
		{"not JSON", `{"type":`, "invalid_json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseClientEvent([]byte(tt.in))
			var pe *ProtocolError
			switch {
			case tt.code == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.code != "" && (!errors.As(err, &pe) || pe.Code != tt.code):
				t.Fatalf("got %v, want %s", err, tt.code)
			}
		})
	}
}

func TestSessionDialectAndTurnDetection(t *testing.T) {
	for _, tt := range []struct {
		in       string
		dialect  Dialect
		set, vad bool
		voice    string
	}{
		{`{"type":"session.update","session":{"type":"realtime","audio":{"input":{"turn_detection":{"type":"server_vad"}},"output":{"voice":"sage"}}}}`, GA, true, true, "sage"},
		{`{"type":"session.update","session":{"modalities":["audio","text"],"voice":"alloy","turn_detection":null}}`, Beta, true, false, "alloy"},
		{`{"type":"session.update","session":{"instructions":"x"}}`, GA, false, false, ""},
	} {
		ev, err := ParseClientEvent([]byte(tt.in))
		if err != nil {
			t.Fatal(err)
		}
		set, vad := ev.Session.turnDetection()
		if d := ev.Session.dialect(GA); d != tt.dialect || set != tt.set || vad != tt.vad || ev.Session.voice() != tt.voice {
			t.Errorf("%s: dialect %v set %v vad %v voice %q", tt.in, d, set, vad, ev.Session.voice())
		}
	}
	if eventName(Beta, "response.output_audio.delta") != "response.audio.delta" || eventName(GA, "response.output_audio.delta") != "response.output_audio.delta" ||
		gaName("response.audio_transcript.delta") != "response.output_audio_transcript.delta" {
		t.Error("event names")
	}
}

func TestSpeakable(t *testing.T) {
	for in, want := range map[string]string{
		"Анна предложила вторник [1][2].":                        "Анна предложила вторник.",
		"See [the report](https://x.example/r) for more [3, 4].": "See the report for more.",
		"Details: https://mail.example/x?id=1 and www.a.example": "Details: and",
		`The tool said {"status":"ok","n":[1,2]} fine.`:          "The tool said fine.",
		"Result:\n```json\n{\"a\":1}\n```\nDone.":                "Result: Done.",
		"## Plan\n- **first** step\n- second":                    "Plan first step second",
		`List [{"id":1}] end`:                                    "List end",
	} {
		if got := Speakable(in); got != want {
			t.Errorf("Speakable(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSplitterCutsSentencesAsTheyStream(t *testing.T) {
	var p splitter
	var got []string
	for _, d := range []string{"Первое пред", "ложение. Второе", "! Код: {\"a\": \"b. c\"", "} конец. Хвост"} {
		got = append(got, p.add(d)...)
	}
	got = append(got, p.flush())
	want := []string{"Первое предложение.", "Второе!", `Код: {"a": "b. c"} конец.`, "Хвост"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q", got)
	}
}

func TestVADStartsAndStops(t *testing.T) {
	tone := func(ms int, amp int16) []byte {
		b := make([]byte, 2*SampleRate*ms/1000)
		for i := 0; i+1 < len(b); i += 2 {
			v := amp
			if (i/2/10)%2 == 0 {
				v = -amp
			}
			binary.LittleEndian.PutUint16(b[i:], uint16(v))
		}
		return b
	}
	var v vad
	if s, e := v.feed(tone(200, 50)); s || e {
		t.Fatal("quiet noise started speech")
	}
	if s, _ := v.feed(tone(200, 8000)); !s {
		t.Fatal("speech did not start")
	}
	if _, e := v.feed(tone(300, 0)); e {
		t.Fatal("stopped after 300 ms of silence")
	}
	if _, e := v.feed(tone(300, 0)); !e {
		t.Fatal("did not stop after 600 ms of silence")
	}
}
