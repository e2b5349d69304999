package group

import (
	"encoding/json"
	"testing"

	"github.com/sova-ai/sova/internal/agent"
)

// A stored run keeps a call's stream data only where the text the model
// read is not that data already: a reopened chat draws its cards from it.
func TestViewData(t *testing.T) {
	videos := json.RawMessage(`{"videos":[{"id":"a"}]}`)
	tests := []struct {
		name string
		in   agent.Result
		want bool
	}{
		{"text output with data", agent.Result{CallID: "1", Output: "1. Video a", Data: videos}, true},
		{"JSON output already", agent.Result{CallID: "2", Output: `{"videos":[]}`, Data: videos}, false},
		{"no data", agent.Result{CallID: "3", Output: "text"}, false},
		{"failed", agent.Result{CallID: "4", Output: "text", Data: videos, Error: "quota"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := viewData([]agent.Result{tt.in})
			if (len(got) == 1) != tt.want {
				t.Fatalf("viewData = %+v, want kept=%v", got, tt.want)
			}
			if tt.want && (got[0].CallID != tt.in.CallID || string(got[0].Data) != string(videos)) {
				t.Errorf("kept %+v", got[0])
			}
		})
	}
}
