package llm

import (
	"encoding/json"
	"testing"
)

// FuzzRepairJSON: whatever a model replies, the repair never panics, and
// what it returns is one JSON object that a second repair leaves as it is.
// Seeds: testdata/fuzz/FuzzRepairJSON.
func FuzzRepairJSON(f *testing.F) {
	f.Add("{\"a\": 1,}")
	f.Fuzz(func(t *testing.T, reply string) {
		out, ok := repairJSON(reply)
		if !ok {
			if out != "" {
				t.Fatalf("failed repair returned %q", out)
			}
			return
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(out), &obj); err != nil {
			t.Fatalf("repair of %q gave %q, not an object: %v", reply, out, err)
		}
		again, ok := repairJSON(out)
		if !ok || again != out {
			t.Fatalf("repair is not stable: %q → %q (%v)", out, again, ok)
		}
	})
}
