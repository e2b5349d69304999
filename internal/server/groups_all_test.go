package server_test

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/sovatest"
)

// allKeys enables every group tool against the fakes: x_search, and the
// flight and film tools.
func allKeys(more map[string]string) map[string]string {
	out := map[string]string{"XAI_API_KEY": "xai-test-key"}
	maps.Copy(out, sovatest.FlightAndFilmKeys)
	maps.Copy(out, more)
	return out
}

// Every group over /v1/chat/completions (model: the group's id): its
// tool call arrives as an OpenAI tool-call chunk, its result as content,
// and the answer keeps only the citations a tool gave.
func TestGroupsOverOpenAI(t *testing.T) {
	e := newGroupEnv(t, allKeys(nil))
	client := openai.NewClient(option.WithBaseURL(e.srv.URL+"/v1"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
	for group, tool := range map[string]string{
		"web": "web_search", "academic": "academic_search", "youtube": "youtube_search", "reddit": "reddit_search",
		"code": "code_context", "x": "x_search", "stocks": "stock_chart", "crypto": "coin_data",
	} {
		t.Run(group, func(t *testing.T) {
			stream := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
				Model:    group,
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("go iterators")},
			})
			acc := openai.ChatCompletionAccumulator{}
			var calls []string
			for stream.Next() {
				ch := stream.Current()
				acc.AddChunk(ch)
				for _, c := range ch.Choices {
					for _, tc := range c.Delta.ToolCalls {
						if tc.Function.Name != "" {
							calls = append(calls, tc.Function.Name)
						}
						if tc.Function.Arguments != "" && !json.Valid([]byte(tc.Function.Arguments)) {
							t.Errorf("arguments are not JSON: %q", tc.Function.Arguments)
						}
					}
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if len(calls) != 1 || calls[0] != tool {
				t.Errorf("tool-call chunks name %q, want %s", calls, tool)
			}
			content := acc.Choices[0].Message.Content
			if !strings.Contains(content, "The sources agree") || !strings.Contains(content, "[1]") || strings.Contains(content, "[9]") {
				t.Errorf("content = %q", content)
			}
			if acc.Choices[0].FinishReason != "stop" {
				t.Errorf("finish reason %q", acc.Choices[0].FinishReason)
			}
		})
	}
}

// The failure of one provider (5xx, timeout, an answer that is not its
// JSON) ends that tool with an error part; the other tool of the step
// stands and the answer goes on.
func TestGroupProviderFailsEveryKind(t *testing.T) {
	tests := []struct {
		name, group, tool, args, prefix string
		reply                           sovatest.ProviderReply
		env                             map[string]string
		want                            string
	}{
		{"stocks 5xx", "stocks", "stock_chart", `{"title":"t","symbols":["AAPL"]}`, sovatest.Yahoo, sovatest.ProviderReply{Status: 502, Body: "bad gateway"}, nil, "502"},
		{"currency timeout", "stocks", "currency_converter", `{"from":"USD","to":"EUR"}`, sovatest.Frankfurt, sovatest.ProviderReply{Delay: 3e9, Body: "{}"},
			map[string]string{"SOVA_MARKETS_TIMEOUT": "300ms"}, "no answer within"},
		{"crypto bad json", "crypto", "coin_ohlc", `{"coinId":"bitcoin"}`, sovatest.CoinGecko, sovatest.ProviderReply{Body: `[[1718000000000, 1, 2`}, nil, "not the expected JSON"},
		{"weather 5xx", "web", "get_weather_data", `{"location":"Berlin"}`, sovatest.OpenMeteo, sovatest.ProviderReply{Status: 500, Body: `{"error":true,"reason":"down"}`}, nil, "500"},
		{"places bad json", "web", "nearby_places_search", `{"location":"Red Square","type":"cafe"}`, sovatest.Nominatim, sovatest.ProviderReply{Body: "<html>busy</html>"}, nil, "not valid JSON"},
		{"flight 5xx", "web", "track_flight", `{"flight_number":"BA283"}`, sovatest.Aviation, sovatest.ProviderReply{Status: 503, Body: "unavailable"}, nil, "503"},
		{"film bad json", "web", "movie_or_tv_search", `{"query":"Inception"}`, sovatest.TMDB, sovatest.ProviderReply{Body: `{"results": [`}, nil, "not the expected JSON"},
		{"x 5xx", "x", "x_search", `{"queries":["q"]}`, sovatest.XAI, sovatest.ProviderReply{Status: 500, Body: `{"error":"internal"}`}, nil, "500"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newGroupEnv(t, allKeys(tt.env))
			e.prov.Fail(tt.prefix, tt.reply)
			other := llm.ToolCall{ID: "b", Name: "datetime", Arguments: `{}`}
			if tt.group == "x" { // x has one tool: two queries, one call
				other = llm.ToolCall{ID: "b", Name: "x_search", Arguments: `{"queries":["r"]}`}
			}
			e.model.GroupCalls = func(r *llmtest.Request) []llm.ToolCall {
				return []llm.ToolCall{{ID: "a", Name: tt.tool, Arguments: tt.args}, other}
			}
			s := e.ask(t, tt.group, "q")
			// The first call of the tool is the one whose provider fails.
			var id, errText string
			for _, c := range s.of("tool-input-available") {
				if c["toolName"] == tt.tool && id == "" {
					id, _ = c["toolCallId"].(string)
				}
			}
			for _, c := range s.of("tool-output-error") {
				if c["toolCallId"] == id {
					errText, _ = c["errorText"].(string)
				}
			}
			if !strings.Contains(errText, tt.want) {
				t.Errorf("%s error part %q, want one saying %q (%v)", tt.tool, errText, tt.want, s.types())
			}
			if tt.group != "x" {
				if _, out, errText := s.tool(t, "datetime"); errText != "" || out["timestamp"] == nil {
					t.Errorf("datetime: %v %q", out, errText)
				}
			}
			last := s.chunks[len(s.chunks)-1]
			if !strings.Contains(s.text, "The sources agree") || last["finishReason"] != "stop" || len(s.of("error")) != 0 {
				t.Errorf("answer %q, finish %v, types %v", s.text, last, s.types())
			}
		})
	}
}
