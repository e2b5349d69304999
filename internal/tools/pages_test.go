package tools

import (
	"testing"

	"github.com/sova-ai/sova"
)

func TestMarkers(t *testing.T) {
	reg := NewPages()
	reg.Add(sova.Source{URL: "https://a.example/1"}, "")
	reg.Add(sova.Source{URL: "https://b.example/2"}, "")
	if p := reg.Add(sova.Source{URL: "https://a.example/1/"}, "again"); p.N != 1 {
		t.Errorf("a page read twice got number %d", p.N)
	}
	if got := reg.KeepKnownMarkers("a [1] b [3] c [2][12]"); got != "a [1] b  c [2]" {
		t.Errorf("keepKnownMarkers: %q", got)
	}
	if got := reg.Markers("[2] x [1] [2] [7]"); len(got) != 2 || got[0] != 2 || got[1] != 1 {
		t.Errorf("markers: %v", got)
	}
	if got := RemapMarkers("x [1] y [2] z [3]", map[int]int{1: 4, 3: 5}); got != "x [4] y  z [5]" {
		t.Errorf("remapMarkers: %q", got)
	}
}
