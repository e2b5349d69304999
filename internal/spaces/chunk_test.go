package spaces

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func heading(level int, text string) block {
	return block{kind: blockHeading, level: level, text: text}
}
func text(t string) block { return block{kind: blockText, text: t} }

func TestChunkKeepsHeadingsWithTheirText(t *testing.T) {
	blocks := []block{
		text("Preface before any heading."),
		heading(1, "Report"),
		heading(2, "Budget"),
		text("The budget is five million."),
		text("It was approved in March."),
		heading(2, "Risks"),
		text("Supplier delays."),
		heading(3, "Weather"),
		text("Short season."),
		heading(2, "Empty section"),
		heading(1, "Annex"),
		text("Tables."),
	}
	got := chunkBlocks(blocks, 1000, 100)
	want := []Chunk{
		{Seq: 1, Heading: "", Text: "Preface before any heading."},
		{Seq: 2, Heading: "Report > Budget", Text: "The budget is five million.\n\nIt was approved in March."},
		{Seq: 3, Heading: "Report > Risks", Text: "Supplier delays."},
		{Seq: 4, Heading: "Report > Risks > Weather", Text: "Short season."},
		{Seq: 5, Heading: "Annex", Text: "Tables."},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("chunks:\n got %+v\nwant %+v", got, want)
	}
}

func TestChunkSplitsLongSectionsWithOverlap(t *testing.T) {
	var sentences []string
	for i := 1; i <= 60; i++ {
		sentences = append(sentences, fmt.Sprintf("Sentence number %d says something about the topic at hand.", i))
	}
	long := strings.Join(sentences, " ") // one paragraph, no line breaks
	blocks := []block{heading(1, "Long"), {kind: blockText, text: long, page: 3}, {kind: blockText, text: "Tail paragraph.", page: 4}}
	const size, overlap = 400, 120
	chunks := chunkBlocks(blocks, size, overlap)
	if len(chunks) < 8 {
		t.Fatalf("%d chunks, want the section cut into many", len(chunks))
	}
	for i, c := range chunks {
		if n := utf8.RuneCountInString(c.Text); n > size {
			t.Errorf("chunk %d has %d characters, over %d", i+1, n, size)
		}
		if c.Heading != "Long" {
			t.Errorf("chunk %d heading %q", i+1, c.Heading)
		}
		if c.Seq != i+1 {
			t.Errorf("chunk %d has seq %d", i+1, c.Seq)
		}
		if i > 0 {
			// Each later chunk starts with the end of the previous one, at a
			// sentence start.
			if !strings.HasPrefix(c.Text, "Sentence number") && !strings.HasPrefix(c.Text, "Tail") {
				t.Errorf("chunk %d starts mid-sentence: %q", i+1, c.Text[:30])
			}
			prev := chunks[i-1].Text
			first, _, _ := strings.Cut(c.Text, ".")
			if !strings.Contains(prev, first+".") && !strings.HasPrefix(c.Text, "Tail") {
				t.Errorf("chunk %d does not overlap the previous one: starts %q", i+1, first)
			}
		}
	}
	// Every sentence is somewhere.
	all := ""
	for _, c := range chunks {
		all += c.Text + " "
	}
	for _, s := range sentences {
		if !strings.Contains(all, s) {
			t.Errorf("lost %q", s)
		}
	}
	if chunks[0].Page != 3 {
		t.Errorf("first chunk page %d, want 3", chunks[0].Page)
	}
}

func TestChunkWithoutOverlapAndHardSplit(t *testing.T) {
	word := strings.Repeat("x", 50)
	blocks := []block{text(strings.Repeat(word+" ", 30)), text(strings.Repeat("y", 700))}
	chunks := chunkBlocks(blocks, 200, 0)
	total := 0
	for _, c := range chunks {
		n := utf8.RuneCountInString(c.Text)
		if n > 200 {
			t.Errorf("chunk of %d characters", n)
		}
		total += strings.Count(c.Text, "x") + strings.Count(c.Text, "y")
	}
	if total != 30*50+700 {
		t.Errorf("%d letters kept, want %d (no overlap, nothing lost)", total, 30*50+700)
	}
}

func TestSentenceEnds(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"One. Two! Three? Four", []string{"One.", " Two!", " Three?", " Four"}},
		{"Mr. smith met Dr. Who. Then left.", []string{"Mr. smith met Dr.", " Who.", " Then left."}},
		{`He said "stop." Then 3 went.`, []string{`He said "stop."`, " Then 3 went."}},
		{"Бюджет утверждён. Срок — март… «Восток» начат.", []string{"Бюджет утверждён.", " Срок — март…", " «Восток» начат."}},
		{"Version 2.5 is out.", []string{"Version 2.5 is out."}},
	}
	for _, tc := range tests {
		var got []string
		start := 0
		for _, e := range sentenceEnds(tc.in) {
			got = append(got, tc.in[start:e])
			start = e
		}
		got = append(got, tc.in[start:])
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tc.want) {
			t.Errorf("sentences of %q = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestOverlapTail(t *testing.T) {
	tests := []struct {
		text string
		n    int
		want string
	}{
		{"First sentence here. Second one. Third.", 20, "Second one. Third."},
		{"First sentence here. Second one. Third.", 8, "Third."},
		{"no sentence end at all in this text", 12, "in this text"},
		{"short", 50, ""},
	}
	for _, tc := range tests {
		if got := overlapTail(tc.text, tc.n); got != tc.want {
			t.Errorf("overlapTail(%q, %d) = %q, want %q", tc.text, tc.n, got, tc.want)
		}
	}
}
