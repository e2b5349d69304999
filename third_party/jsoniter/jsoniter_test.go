package jsoniter

import (
	"reflect"
	"testing"
)

// The geo shapes bleve stores round-trip as they do with encoding/json.
func TestRoundTrip(t *testing.T) {
	type shape struct {
		Type        string      `json:"type"`
		Coordinates [][]float64 `json:"coordinates"`
	}
	in := shape{Type: "linestring", Coordinates: [][]float64{{1.5, 2}, {3, 4.25}}}
	for _, api := range []API{ConfigCompatibleWithStandardLibrary} {
		b, err := api.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != `{"type":"linestring","coordinates":[[1.5,2],[3,4.25]]}` {
			t.Errorf("marshal: %s", b)
		}
		var out shape
		if err := api.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(in, out) {
			t.Errorf("round trip: %+v", out)
		}
	}
	if err := Unmarshal([]byte(`{"type":`), &struct{}{}); err == nil {
		t.Error("a cut document must be an error")
	}
}
