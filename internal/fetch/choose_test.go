package fetch

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// prose returns n sentences of words made from prefix, so that texts with
// different prefixes share no shingle.
func prose(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		for j := range 8 {
			fmt.Fprintf(&b, "%s%dx%d ", prefix, i, j)
		}
		b.WriteString("end. ")
	}
	return strings.TrimSpace(b.String())
}

// shortBlocks returns n distinct one-sentence blocks, like a list of
// teasers.
func shortBlocks(n int) string {
	blocks := make([]string, n)
	for i := range blocks {
		blocks[i] = prose(fmt.Sprintf("teaser%d", i), 1)
	}
	return strings.Join(blocks, "\n\n")
}

func TestChooseContent(t *testing.T) {
	article := prose("Article", 30)
	teasers := prose("Related", 12)
	longTail := prose("Continued", 10) + "\n\n" + prose("Further", 10) + "\n\n" + prose("Later", 10) + "\n\n" + prose("Final", 10)
	tests := []struct {
		name       string
		traf, read string
		want       string
	}{
		{"only trafilatura", article, "", ExtractorTrafilatura},
		{"only readability", "", article, ExtractorReadability},
		{"same text", article, article, ExtractorTrafilatura},
		{
			name: "readability inside trafilatura, which adds teasers",
			traf: article + "\n\n" + teasers, read: article,
			want: ExtractorReadability,
		},
		{
			name: "trafilatura stopped early, readability adds long prose",
			traf: article, read: article + "\n\n" + longTail,
			want: ExtractorReadability,
		},
		{
			name: "readability adds repeated share bars and listings",
			traf: article,
			read: article + strings.Repeat("\n\nShare Facebook Twitter Email Print", 3) + "\n\n" + longTail,
			want: ExtractorTrafilatura,
		},
		{
			name: "readability adds short blocks",
			traf: article,
			read: article + "\n\n" + shortBlocks(80),
			want: ExtractorTrafilatura,
		},
		{
			name: "trafilatura found a short block, readability the article",
			traf: prose("Cookie", 3), read: article,
			want: ExtractorReadability,
		},
		{
			name: "readability lost the opening paragraph",
			traf: prose("Lede", 5) + "\n\n" + article + "\n\n" + teasers, read: article,
			want: ExtractorTrafilatura,
		},
		{
			name: "readability lost only short opening blocks",
			traf: shortBlocks(4) + "\n\n" + article + "\n\n" + teasers, read: article,
			want: ExtractorReadability,
		},
		{
			name: "different texts keep trafilatura",
			traf: article, read: prose("Other", 30),
			want: ExtractorTrafilatura,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			md, got := chooseContent(tt.traf, tt.read)
			if got != tt.want {
				t.Fatalf("chose %s, want %s", got, tt.want)
			}
			if tt.traf != tt.read && (got == ExtractorReadability) != (md == tt.read) {
				t.Errorf("returned text does not belong to %s", got)
			}
		})
	}
}

func TestDropHeadline(t *testing.T) {
	tests := []struct {
		name, md, title string
		want, headline  string
	}{
		{"h1 dropped", "# Big news today\n\nBody text.", "", "Body text.", "Big news today"},
		{"h1 that is not the title stays", "# Big news today\n\nBody text.", "Something else | Site", "# Big news today\n\nBody text.", ""},
		{"standfirst set as h2 stays", "## Simon travels to Rome for a taste of polo\n\nBody text.", "Polo in Rome | Magazine", "## Simon travels to Rome for a taste of polo\n\nBody text.", ""},
		{"h2 matching the title", "## Big news today\n\nBody text.", "Big news today | Site", "Body text.", "Big news today"},
		{"h2 not matching the title stays", "## Background\n\nBody text.", "Big news today", "## Background\n\nBody text.", ""},
		{"no heading first", "Intro.\n\n# Big news today\n\nBody.", "Big news today", "Intro.\n\n# Big news today\n\nBody.", ""},
		{"heading alone is kept", "# Only a heading", "Only a heading", "# Only a heading", ""},
		{"link in headline", "# [Big news](https://x.example/n) today\n\nBody.", "", "Body.", "Big news today"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, h := dropHeadline(tt.md, tt.title)
			if got != tt.want || h != tt.headline {
				t.Errorf("dropHeadline = %q, %q; want %q, %q", got, h, tt.want, tt.headline)
			}
		})
	}
}

func TestRestoreSpaces(t *testing.T) {
	tests := []struct {
		name     string
		content  string // what trafilatura returns, tails trimmed
		original string // the page's own text
		want     string
	}{
		{
			name:     "spaces the page had come back",
			content:  `<p>This grant will fund<a>Evidence Action Beta</a>to create an incubator.</p>`,
			original: "This grant will fund Evidence Action Beta to create an incubator.",
			want:     `<p>This grant will fund <a>Evidence Action Beta </a>to create an incubator.</p>`,
		},
		{
			name:     "punctuation after a link stays attached",
			content:  `<p>See the<a>report</a>. It is long.</p>`,
			original: "See the report. It is long.",
			want:     `<p>See the <a>report</a>. It is long.</p>`,
		},
		{
			name:     "words the page wrote together stay together",
			content:  `<p>The<b>bold</b>face type.</p>`,
			original: "The boldface type.",
			want:     `<p>The <b>bold</b>face type.</p>`,
		},
		{
			name:     "CJK without spaces is left alone",
			content:  `<p>今回はそのKindleデスクトップアプリ<a>Kindle for PC</a>に関する話。</p>`,
			original: "今回はそのKindleデスクトップアプリKindle for PCに関する話。",
			want:     `<p>今回はそのKindleデスクトップアプリ<a>Kindle for PC</a>に関する話。</p>`,
		},
		{
			name:     "text moved by the extractor gets a space between words",
			content:  `<p>2 for<strong>Mason Rudolph</strong>, 3 more.</p>`,
			original: "2 for Larry Ogunjobi, 3 for Myles Garrett. Mason Rudolph",
			want:     `<p>2 for <strong>Mason Rudolph</strong>, 3 more.</p>`,
		},
		{
			name:     "blocks are not inline",
			content:  `<div><p>One</p><p>Two</p></div>`,
			original: "One Two",
			want:     `<div><p>One</p><p>Two</p></div>`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nodes, err := html.ParseFragment(strings.NewReader(tt.content), &html.Node{Type: html.ElementNode, Data: "body", DataAtom: atom.Body})
			if err != nil {
				t.Fatal(err)
			}
			root := &html.Node{Type: html.ElementNode, Data: "div"}
			for _, n := range nodes {
				root.AppendChild(n)
			}
			// Trafilatura's elements carry no atom; the code must cope.
			clearAtoms(root)
			restoreSpaces(root, tt.original)
			var b bytes.Buffer
			for c := root.FirstChild; c != nil; c = c.NextSibling {
				_ = html.Render(&b, c)
			}
			if b.String() != tt.want {
				t.Errorf("got  %s\nwant %s", b.String(), tt.want)
			}
		})
	}
}

func clearAtoms(n *html.Node) {
	n.DataAtom = 0
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		clearAtoms(c)
	}
}

func TestPlainText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"# Title\n\nA [link](https://x.example/a_(b)) here.", "Title\n\nA link here."},
		{"![alt](https://x.example/i.png) text", "text"},
		{"- one\n- two\n1. first\n12) twelfth", "one\ntwo\nfirst\ntwelfth"},
		{"> quoted **bold** and *em* and ~~gone~~", "quoted bold and em and gone"},
		{`Choreographer\_Jeong \[an\] 5\*3`, "Choreographer_Jeong [an] 5*3"},
		{"| a | b |\n| --- | --- |\n| 1 | 2 |", "a   b\n1   2"},
		{"```go\ncode()\n```", "code()"},
		{"See <https://x.example/page>.", "See https://x.example/page."},
		{`[title](https://x.example "Title text") end`, "title end"},
	}
	for _, tt := range tests {
		if got := PlainText(tt.in); got != tt.want {
			t.Errorf("PlainText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDropEdgeLinks(t *testing.T) {
	tests := []struct{ in, want string }{
		{"[Back to the list](https://x.example/l)\n\nBody one.\n\nBody two.\n\n[Read more »](https://x.example/m)", "Body one.\n\nBody two."},
		{"Body.\n\n- [Next article](https://x.example/n)", "Body."},
		{"Body.\n\n[A link with many words that is a sentence of the article](https://x.example/s)", "Body.\n\n[A link with many words that is a sentence of the article](https://x.example/s)"},
		{"Body with [a link](https://x.example/a) inside.\n\nSee [more](https://x.example/m) here.", "Body with [a link](https://x.example/a) inside.\n\nSee [more](https://x.example/m) here."},
		{"[Only a link](https://x.example/o)", "[Only a link](https://x.example/o)"},
	}
	for _, tt := range tests {
		if got := dropEdgeLinks(tt.in); got != tt.want {
			t.Errorf("dropEdgeLinks(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDropComments(t *testing.T) {
	article := prose("Article", 10)
	tests := []struct{ in, want string }{
		{article + "\n\n### 3 Kommentare\n\nAnna: great post!\n\nBen: thanks", article},
		{article + "\n\nLeave a Reply\n\nYour email will not be published.", article},
		{article + "\n\n## Комментарии (2)\n\nИван: спасибо", article},
		// A marker near the start is a link bar, not the end of the article.
		{"Comments\n\n" + article, "Comments\n\n" + article},
		// A section of the article is not a comment thread.
		{article + "\n\n## Response\n\n" + prose("Answer", 5), article + "\n\n## Response\n\n" + prose("Answer", 5)},
		{article + "\n\nComments are closed for this article because of the subject.", article + "\n\nComments are closed for this article because of the subject."},
	}
	for _, tt := range tests {
		if got := dropComments(tt.in); got != tt.want {
			t.Errorf("dropComments(%q) = %q", tt.in, got)
		}
	}
}
