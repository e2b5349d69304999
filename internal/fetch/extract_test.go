package fetch

import (
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/unicode/norm"
)

func TestExtract(t *testing.T) {
	article, err := os.ReadFile("testdata/boilerplate_article.html")
	if err != nil {
		t.Fatal(err)
	}
	footerOnly := "<html><head><title>Footer page</title></head><body><footer><p>" +
		strings.Repeat("Текст, который стоит только в подвале страницы, но другого нет. ", 4) +
		"</p></footer></body></html>"
	tests := []struct {
		name      string
		html      []byte
		pageURL   string
		wantTitle string
		want      []string
		unwanted  []string
		wantErr   error
	}{
		{
			name:      "boilerplate article",
			html:      article,
			pageURL:   "https://news.example/2024/03/tidal/index.html",
			wantTitle: "How Tidal Power Works",
			want: []string{
				"## Barrages and lagoons",
				"Medieval tide mills",
				"[2023 tidal stream report](https://news.example/2024/03/reports/tidal-stream-2023.html)",
			},
			// The headline is the title, not repeated in the content.
			unwanted: []string{"# How Tidal Power Works", "cookie", "COMMENT_TEXT", "SIDEBAR", "FOOTER", "SCRIPT", "NOSCRIPT", "IFRAME", "data:"},
		},
		{
			name:      "windows-1251 with meta, no network",
			html:      mustEncode(t, charmap.Windows1251, russianPage(`<meta charset="windows-1251">`)),
			wantTitle: "Новости науки",
			want:      []string{russianText},
			unwanted:  []string{"Все права защищены"},
		},
		{
			name: "base href and relative links",
			html: []byte(`<html><head><base href="https://cdn.example/docs/v2/"><title>Guide</title></head><body><article><h1>Guide</h1><p>` +
				strings.Repeat("Read the installation notes carefully before you begin. ", 5) +
				`See <a href="install.html">install</a>, <a href="/top">top</a>, <a href="#s2">section two</a>, <a href="mailto:help@example.com">mail us</a> and <a href="data:text/html,hi">data</a>.</p></article></body></html>`),
			pageURL:   "https://site.example/guide",
			wantTitle: "Guide",
			want: []string{
				"[install](https://cdn.example/docs/v2/install.html)",
				"[top](https://cdn.example/top)",
				"section two",
				" mail us and data.",
			},
			unwanted: []string{"#s2", "data:text", "mailto:"},
		},
		{
			name:      "readability rescues what trafilatura discards",
			html:      []byte(footerOnly),
			wantTitle: "Footer page",
			want:      []string{"Текст, который стоит только в подвале страницы"},
		},
		{
			name:      "short page not repeated",
			html:      []byte("<html><body><p>Only a short note here, about seventy characters long in total.</p></body></html>"),
			wantTitle: "",
			want:      []string{"Only a short note here"},
		},
		{
			name: "table kept as Markdown table",
			html: []byte(`<html><head><title>Prices</title></head><body><article><h1>Prices</h1><p>` +
				strings.Repeat("Our prices are listed in the table below and change every season. ", 4) +
				`</p><table><tr><th>Item</th><th>Price</th></tr><tr><td>Tea</td><td>2 EUR</td></tr><tr><td>Cake</td><td>4 EUR</td></tr></table></article></body></html>`),
			wantTitle: "Prices",
			want:      []string{"| Tea", "2 EUR"},
		},
		{
			name:    "empty document",
			html:    []byte("<html><body>   </body></html>"),
			wantErr: ErrNoContent,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			title, md, err := Extract(tt.html, tt.pageURL)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Extract: %v", err)
			}
			if title != tt.wantTitle {
				t.Errorf("title = %q, want %q", title, tt.wantTitle)
			}
			for _, w := range tt.want {
				if !strings.Contains(md, w) {
					t.Errorf("Markdown lacks %q:\n%s", w, md)
				}
			}
			for _, u := range tt.unwanted {
				if strings.Contains(md, u) {
					t.Errorf("Markdown contains %q:\n%s", u, md)
				}
			}
			if strings.Count(md, "Only a short note") > 1 {
				t.Errorf("text repeated:\n%s", md)
			}
		})
	}
}

func TestDropRepeatedBlocks(t *testing.T) {
	tests := []struct{ in, want string }{
		{"A para.\n\nA para.", "A para."},
		{"## Head\n\nOne para.\n\nTwo para.\n\nTitleHeadOne para.Two para.", "## Head\n\nOne para.\n\nTwo para."},
		{"Note\n\nNote that this paragraph mentions the note again.", "Note\n\nNote that this paragraph mentions the note again."},
		{"Alpha beta.\n\nGamma delta.", "Alpha beta.\n\nGamma delta."},
	}
	for _, tt := range tests {
		if got := dropRepeatedBlocks(tt.in); got != tt.want {
			t.Errorf("dropRepeatedBlocks(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPruneDocument(t *testing.T) {
	parse := func(s string) *html.Node {
		doc, err := html.Parse(strings.NewReader(s))
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	doc := parse("<html><body><p>héllo wörld</p><p>second</p><div><p>third</p></div></body></html>")
	if !pruneDocument(doc, 8, 1000) {
		t.Fatal("pruneDocument reported nothing cut")
	}
	if got := textContent(doc); got != "héllo wör" { // white space not counted
		t.Errorf("text after pruning to 8 chars = %q", got)
	}

	doc = parse("<html><body><p>a</p><p>b</p><p>c</p><p>d</p></body></html>")
	// html, head, body, p, p: the third <p> is the sixth element.
	pruneDocument(doc, 1000, 5)
	if got := textContent(doc); got != "ab" {
		t.Errorf("text after pruning to 5 elements = %q", got)
	}

	// Indentation does not count.
	doc = parse("<html><body>" + strings.Repeat("\n"+strings.Repeat(" ", 40)+"<div>", 20) + "<p>the article</p></body></html>")
	if pruneDocument(doc, 40, 1000) {
		t.Errorf("indentation used up the budget: %q", collapseSpace(textContent(doc)))
	}

	doc = parse(`<html><head><script type="application/ld+json">{"articleBody":"` + strings.Repeat("x", 50) + `"}</script></head><body><p>kept</p></body></html>`)
	if pruneDocument(doc, 10, 1000) {
		t.Error("JSON-LD text counted against the budget")
	}
}

func TestNoscriptPostKept(t *testing.T) {
	post := strings.Repeat("The post is in a noscript element, as some blog engines write it. ", 6)
	doc, _ := html.Parse(strings.NewReader(`<html><head><noscript><img src="pixel.gif"></noscript></head><body>` +
		`<noscript><p>Please enable JavaScript.</p></noscript><div id="app"></div><noscript><article><p>` + post + `</p><script>x()</script></article></noscript></body></html>`))
	stripInactive(doc)
	var b strings.Builder
	_ = html.Render(&b, doc)
	out := b.String()
	if !strings.Contains(out, "<article><p>The post is in") {
		t.Errorf("the post in <noscript> was not kept as HTML: %s", out)
	}
	for _, gone := range []string{"enable JavaScript", "pixel", "x()", "<noscript"} {
		if strings.Contains(out, gone) {
			t.Errorf("%q survived: %s", gone, out)
		}
	}
}

func TestStripInactive(t *testing.T) {
	doc, _ := html.Parse(strings.NewReader(`<html><head><script>evil()</script><script type="application/ld+json">{"a":1}</script><style>p{}</style></head>` +
		`<body><!-- c --><p>text</p><noscript>ns</noscript><template>tp</template><iframe>if</iframe><svg><text>sv</text></svg></body></html>`))
	stripInactive(doc)
	var b strings.Builder
	_ = html.Render(&b, doc)
	out := b.String()
	for _, gone := range []string{"evil", "p{}", "<!--", "ns", "tp", "if<", "sv"} {
		if strings.Contains(out, gone) {
			t.Errorf("%q survived: %s", gone, out)
		}
	}
	if !strings.Contains(out, `{"a":1}`) || !strings.Contains(out, "<p>text</p>") {
		t.Errorf("JSON-LD or text lost: %s", out)
	}
}

func TestTrimText(t *testing.T) {
	para := func(n int, word string) string { return strings.TrimSpace(strings.Repeat(word+" ", n)) }
	tests := []struct {
		name      string
		in        string
		max       int
		want      string
		truncated bool
	}{
		{"short", "Hello world.", 100, "Hello world.", false},
		{"exact", "abc", 3, "abc", false},
		{"no limit", "abc def", -1, "abc def", false},
		{"paragraph boundary", para(10, "aaaa") + ".\n\n" + para(10, "bbbb") + ".", 70, para(10, "aaaa") + ".", true},
		{"word boundary", "alpha beta gamma delta", 13, "alpha beta", true},
		{"cut lands on space", "alpha beta gamma", 10, "alpha beta", true},
		{"sentence boundary", "One two three four five six. Seven eight nine ten eleven", 40, "One two three four five six.", true},
		{"no spaces (CJK)", "日本語のテキストはスペースがありません", 5, "日本語のテ", true},
		{"multibyte word cut", "Съешь же ещё этих мягких", 14, "Съешь же ещё", true},
		{"dangling heading dropped", para(20, "text") + "\n\n## Next section\n\n" + para(20, "more"), 120, para(20, "text"), true},
		{"zero max", "abc", 0, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, truncated := trimText(tt.in, tt.max)
			if got != tt.want || truncated != tt.truncated {
				t.Errorf("trimText(%q, %d) = %q, %v; want %q, %v", tt.in, tt.max, got, truncated, tt.want, tt.truncated)
			}
			if !utf8.ValidString(got) {
				t.Errorf("result is not valid UTF-8")
			}
			if tt.max >= 0 && utf8.RuneCountInString(got) > tt.max {
				t.Errorf("result has %d characters, over %d", utf8.RuneCountInString(got), tt.max)
			}
		})
	}
}

// tidyMarkdown in one pass does what the two regular-expression replaces
// did before it (trailing spaces and tabs, then runs of blank lines).
func TestTidyMarkdownMatchesTheReplaces(t *testing.T) {
	trailingWS := regexp.MustCompile(`[ \t]+\n`)
	blankLines := regexp.MustCompile(`\n{3,}`)
	old := func(s string) string {
		s = norm.NFC.String(invisibleSet.Replace(s))
		s = trailingWS.ReplaceAllString(s, "\n")
		s = blankLines.ReplaceAllString(s, "\n\n")
		return strings.TrimSpace(s)
	}
	for _, in := range []string{
		"", "a", "\n\n\na\n\n\n", "a  \n\t\n \nb", "a\n\nb\n\n\n\nc\t", "  lead\n\n  \n\u00a0\nx",
		"a\r\n\r\n\r\nb\u00ad", "# T\n\n\n\n- x  \n- y\t\n\n\n```\ncode  \n\n\n```", " \t \n\n", "e\u0301 \n",
	} {
		if got, want := tidyMarkdown(in), old(in); got != want {
			t.Errorf("tidyMarkdown(%q) = %q, want %q", in, got, want)
		}
	}
}

// PlainText tries each pattern only on lines that hold its characters;
// the result is what applying every pattern to every line gives.
func TestPlainTextShortcutsChangeNothing(t *testing.T) {
	full := func(md string) string {
		var out []string
		for _, line := range strings.Split(md, "\n") {
			if mdFence.MatchString(line) || mdTableRule.MatchString(line) {
				continue
			}
			line = mdLinePrefix.ReplaceAllString(line, "")
			line = mdImage.ReplaceAllString(line, "")
			line = mdLink.ReplaceAllString(line, "$1")
			line = mdAutolink.ReplaceAllString(line, "$1")
			line = mdEscape.ReplaceAllStringFunc(line, func(m string) string { return string(rune(escapeBase + int(m[1]))) })
			line = mdEmphasis.ReplaceAllString(line, "")
			line = strings.Map(func(r rune) rune {
				if r >= escapeBase && r < escapeBase+128 {
					return r - escapeBase
				}
				return r
			}, line)
			if strings.Contains(line, "|") && strings.Count(line, "|") >= 2 {
				line = strings.TrimSpace(strings.ReplaceAll(line, "|", " "))
			}
			out = append(out, strings.TrimRight(line, " \t"))
		}
		return tidyMarkdown(strings.Join(out, "\n"))
	}
	md := "# Title\n\n  Plain prose, no syntax.\n> quoted **bold** and *it*\n12. numbered [link](https://a.example/x \"t\")\n" +
		"- item ![img](i.png) <https://b.example>\n\\*not emphasis\\* ~~struck~~\n```go\ncode\n```\n| a | b |\n| --- | --- |\n| 1 | 2 |\n" +
		"\t\f indented text\n+ plus item\n---\nnot-a-rule --- inside\n~~~\n"
	for _, in := range append(strings.Split(md, "\n"), md) {
		if got, want := PlainText(in), full(in); got != want {
			t.Errorf("PlainText(%q) = %q, want %q", in, got, want)
		}
	}
}
