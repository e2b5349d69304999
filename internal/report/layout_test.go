package report

import (
	"strings"
	"testing"
	"time"
)

func testMetrics(t *testing.T) *metrics {
	t.Helper()
	m, err := fontMetrics()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// lineTexts renders laid-out lines back to text, a space where frags are
// apart.
func lineTexts(lns []line) []string {
	var out []string
	for _, ln := range lns {
		var b strings.Builder
		end := 0.0
		for i, f := range ln.frags {
			if i > 0 && f.x > end+0.01 {
				b.WriteByte(' ')
			}
			b.WriteString(f.text)
			end = f.x + f.w
		}
		out = append(out, b.String())
	}
	return out
}

func TestLayout(t *testing.T) {
	m := testMetrics(t)
	ts := bodyStyle
	charW := m.width("x", fontRegular, ts.size)
	tests := []struct {
		name  string
		spans []span
		width float64
		want  []string
	}{
		{"fits on one line", []span{{text: "Короткая строка"}}, 400, []string{"Короткая строка"}},
		{"wraps at spaces", []span{{text: "aaa bbb ccc"}}, 7.5 * charW, []string{"aaa bbb", "ccc"}},
		{"spaces collapse", []span{{text: "a   b \n c"}}, 400, []string{"a b c"}},
		{"styles glue into one word", []span{{text: "bold", st: styleBold}, {text: ", next"}}, 400, []string{"bold, next"}},
		{"hard break", []span{{text: "one"}, {br: true}, {text: "two"}}, 400, []string{"one", "two"}},
		{"double hard break leaves an empty line", []span{{text: "a"}, {br: true}, {br: true}, {text: "b"}}, 400, []string{"a", "", "b"}},
		{"long word splits by characters", []span{{text: strings.Repeat("x", 25)}}, 10.5 * charW, []string{strings.Repeat("x", 10), strings.Repeat("x", 10), strings.Repeat("x", 5)}},
		{"URL breaks after a slash", []span{{text: "https://example.com/abcdef/ghijkl", link: "https://example.com/abcdef/ghijkl"}}, m.width("https://example.com/abcdef/gh", fontRegular, ts.size),
			[]string{"https://example.com/abcdef/", "ghijkl"}},
		{"URL after text starts on the line when room is left", []span{{text: "see "}, {text: "https://example.com/aaaaaaaaaa/bbbbbbbbbb/cccccccccc"}}, m.width("see https://example.com/aaaaaaaaaa/", fontRegular, ts.size) + 1,
			[]string{"see https://example.com/aaaaaaaaaa/", "bbbbbbbbbb/cccccccccc"}},
		{"empty", nil, 400, nil},
		{"only spaces", []span{{text: "   "}}, 400, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lns := m.layout(tt.spans, ts, tt.width)
			got := lineTexts(lns)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("lines = %q, want %q", got, tt.want)
			}
			for _, ln := range lns {
				if ln.w > tt.width+0.01 && len(ln.frags) > 1 {
					t.Errorf("line %q is %.1f wide, over %.1f", lineTexts([]line{ln}), ln.w, tt.width)
				}
			}
		})
	}
}

// TestLayoutRuns checks that a line is drawn in one piece per style run,
// not one per word, and that links and code spans keep their extent.
func TestLayoutRuns(t *testing.T) {
	m := testMetrics(t)
	lns := m.layout([]span{
		{text: "plain words here "},
		{text: "bold words", st: styleBold},
		{text: " "},
		{text: "a link text", link: "https://x.org"},
		{text: " "},
		{text: "code one", st: styleCode},
		{text: " "},
		{text: "code two", st: styleCode},
	}, bodyStyle, 1000)
	if len(lns) != 1 {
		t.Fatalf("got %d lines", len(lns))
	}
	var got []string
	for _, f := range lns[0].frags {
		got = append(got, f.text)
	}
	want := []string{"plain words here", "bold words", "a link text", "code one", "code two"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("runs = %q, want %q", got, want)
	}
	// Widths of merged runs match their text measured whole.
	for _, f := range lns[0].frags {
		if w := m.width(f.text, f.font, f.size); w-f.w > 0.01 || f.w-w > 0.01 {
			t.Errorf("run %q is %.2f wide, its text measures %.2f", f.text, f.w, w)
		}
	}
}

// TestLayoutProgress lays out hostile widths: every character must be
// placed exactly once whatever the width.
func TestLayoutProgress(t *testing.T) {
	m := testMetrics(t)
	text := "Экономика " + strings.Repeat("https://example.com/path?q=1&r=2 ", 5) + strings.Repeat("W", 50)
	for _, w := range []float64{0, 0.5, 3, 17, 60, 211.3, 1e6} {
		lns := m.layout([]span{{text: text}}, bodyStyle, w)
		got := strings.ReplaceAll(strings.Join(lineTexts(lns), ""), " ", "")
		if want := strings.ReplaceAll(text, " ", ""); got != want {
			t.Errorf("width %v: text changed in layout:\n%q\n%q", w, got, want)
		}
	}
}

func TestClean(t *testing.T) {
	m := testMetrics(t)
	tests := []struct{ in, want string }{
		{"Ёжик и ёлка «в лесу» — 1930-х № 5 …", "Ёжик и ёлка «в лесу» — 1930-х № 5 …"},
		{"tab\there", "tab here"},
		{"zero\u200bwidth\u00adsoft", "zerowidthsoft"},
		{"ok ✓ fail ✗ 100 ₽", "ok + fail × 100 RUB"},
		{"рост 📈!", "рост !"},
		{"漢字", "\uFFFD\uFFFD"},
		{"bell\x07", "bell"},
		{"bad\xffbyte", "bad\uFFFDbyte"},
	}
	for _, tt := range tests {
		if got := m.clean(tt.in, fontRegular); got != tt.want {
			t.Errorf("clean(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// The fonts cover Russian and English completely.
	for _, f := range []fontID{fontRegular, fontBold, fontItalic, fontBoldItalic, fontMono} {
		alphabet := "АБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯабвгдеёжзийклмнопрстуфхцчшщъыьэюяABCXYZabcxyz0123456789"
		if !m.has(alphabet, f) {
			t.Errorf("face %s%s lacks letters", faces[f].family, faces[f].style)
		}
	}
}

func TestUnescape(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{`\*a\* \\ \q`, `*a* \ \q`},
		{"&amp; &lt; &copy; &#1046;&#x416; &#0; &bogus; & alone", "& < © ЖЖ \uFFFD &bogus; & alone"},
		{"&#99999999;", "&#99999999;"},
		{"nul\x00", "nul\uFFFD"},
	}
	for _, tt := range tests {
		if got := unescape([]byte(tt.in)); got != tt.want {
			t.Errorf("unescape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLinkTarget(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://example.com/a?b=c", "https://example.com/a?b=c"},
		{"HTTP://Example.com", "HTTP://Example.com"},
		{"mailto:a@b.c", "mailto:a@b.c"},
		{"https://ru.wikipedia.org/wiki/Депрессия", "https://ru.wikipedia.org/wiki/%D0%94%D0%B5%D0%BF%D1%80%D0%B5%D1%81%D1%81%D0%B8%D1%8F"},
		{"https://x.org/a b", "https://x.org/a%20b"},
		{"javascript:alert(1)", ""},
		{"file:///etc/passwd", ""},
		{"data:text/html,hi", ""},
		{"/relative/path", ""},
		{"#anchor", ""},
		{"", ""},
		{"https://x.org/" + strings.Repeat("a", 9000), ""},
	}
	for _, tt := range tests {
		if got := linkTarget([]byte(tt.in)); got != tt.want {
			t.Errorf("linkTarget(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFormatDate(t *testing.T) {
	d := time.Date(1933, 3, 4, 12, 0, 0, 0, time.UTC)
	tests := []struct{ lang, want string }{
		{"ru", "4 марта 1933 г."},
		{"en", "March 4, 1933"},
		{"de", "March 4, 1933"},
	}
	for _, tt := range tests {
		if got := formatDate(d, tt.lang); got != tt.want {
			t.Errorf("formatDate(%s) = %q, want %q", tt.lang, got, tt.want)
		}
	}
}
