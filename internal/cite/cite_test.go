package cite

import (
	"strings"
	"testing"

	"github.com/sova-ai/sova"
)

func sources(n int) []sova.Source {
	var out []sova.Source
	for i := 1; i <= n; i++ {
		out = append(out, sova.Source{URL: "https://example.com/" + string(rune('a'+i-1)), Title: "page " + string(rune('a'+i-1))})
	}
	return out
}

func TestApply(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		read      int
		want      string
		wantCited []string // URLs in published order
	}{
		{"renumbers by first use", "Growth fell [3]. Prices too [1]. Again [3].", 3,
			"Growth fell [1]. Prices too [2]. Again [1].", []string{"c", "a"}},
		{"drops unread", "Claim [7] and [2].", 3, "Claim  and [1].", []string{"b"}},
		{"groups", "Both [1, 2] and [2;3].", 3, "Both [1][2] and [2][3].", []string{"a", "b", "c"}},
		{"range", "See [1-3].", 3, "See [1][2][3].", []string{"a", "b", "c"}},
		{"links untouched", "A [link](http://x) and [note] and [1].", 1, "A [link](http://x) and [note] and [1].", []string{"a"}},
		{"zero dropped", "Bad [0].", 2, "Bad .", nil},
		{"unfinished bracket flushed", "Trailing [1", 1, "Trailing [1", nil},
		{"double bracket", "[[1]]", 1, "[[1]]", []string{"a"}},
		{"cyrillic", "Рост [2] и спад [2].", 2, "Рост [1] и спад [1].", []string{"b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, cited := Apply(tt.in, sources(tt.read))
			if got != tt.want {
				t.Errorf("text = %q, want %q", got, tt.want)
			}
			var urls []string
			for i, c := range cited {
				if c.Number != i+1 {
					t.Errorf("cited[%d].Number = %d", i, c.Number)
				}
				urls = append(urls, strings.TrimPrefix(c.URL, "https://example.com/"))
			}
			if strings.Join(urls, ",") != strings.Join(tt.wantCited, ",") {
				t.Errorf("cited = %v, want %v", urls, tt.wantCited)
			}
		})
	}
}

// Streaming must give the same result however the text is split.
func TestFilterSplitsAnywhere(t *testing.T) {
	in := "Econ [2] fell [1, 9]; see [link](u) [3-4] end [2"
	want, _ := Apply(in, sources(4))
	for size := 1; size <= len(in); size++ {
		var calls int
		f := NewFilter(sources(4), func(sova.Source) { calls++ })
		var out strings.Builder
		for i := 0; i < len(in); i += size {
			out.WriteString(f.Write(in[i:min(i+size, len(in))]))
		}
		out.WriteString(f.Flush())
		if out.String() != want {
			t.Fatalf("chunk %d: %q, want %q", size, out.String(), want)
		}
		if calls != len(f.Cited()) || calls != 4 {
			t.Fatalf("chunk %d: onCite called %d times for %d cited", size, calls, len(f.Cited()))
		}
	}
}

func TestExtendNumbersLaterSources(t *testing.T) {
	f := NewFilter([]sova.Source{{URL: "https://a.example"}}, nil)
	out := f.Write("First [1], not yet [2]. ")
	f.Extend(sova.Source{URL: "sova://spaces/s/documents/d#chunk-3", Kind: sova.SourceDocument})
	out += f.Write("Then [2] and [1].") + f.Flush()
	if out != "First [1], not yet . Then [2] and [1]." {
		t.Errorf("text = %q", out)
	}
	cited := f.Cited()
	if len(cited) != 2 || cited[1].Kind != sova.SourceDocument || cited[1].Number != 2 {
		t.Errorf("cited = %+v", cited)
	}
}
