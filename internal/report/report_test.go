package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// render renders md and checks the result is a complete PDF file.
func render(t testing.TB, md string, opts Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := PDF(&buf, md, opts); err != nil {
		t.Fatalf("PDF: %v", err)
	}
	out := buf.Bytes()
	if !bytes.HasPrefix(out, []byte("%PDF-")) || !bytes.HasSuffix(bytes.TrimSpace(out), []byte("%%EOF")) {
		t.Fatalf("output is not a complete PDF file (%d bytes)", len(out))
	}
	return out
}

// poppler runs a poppler-utils tool on a PDF and returns its output; the
// test skips when the tool is not installed.
func poppler(t *testing.T, tool string, pdf []byte, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		t.Skipf("%s not installed (Debian package poppler-utils): skipping the check of the rendered PDF", tool)
	}
	path := filepath.Join(t.TempDir(), "report.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tool, append(args, path, "-")...)
	if tool == "pdfinfo" {
		cmd = exec.Command(tool, append(args, path)...)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v: %s", tool, err, stderr.String())
	}
	if strings.Contains(stderr.String(), "Syntax Error") {
		t.Errorf("%s finds the PDF malformed: %s", tool, stderr.String())
	}
	return string(out)
}

func pdfText(t *testing.T, pdf []byte) string {
	return poppler(t, "pdftotext", pdf, "-enc", "UTF-8")
}

// pdfInfo returns pdfinfo's fields.
func pdfInfo(t *testing.T, pdf []byte) map[string]string {
	info := map[string]string{}
	for _, l := range strings.Split(poppler(t, "pdfinfo", pdf, "-enc", "UTF-8"), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if ok {
			info[k] = strings.TrimSpace(v)
		}
	}
	return info
}

func pageCount(t *testing.T, pdf []byte) int {
	n, err := strconv.Atoi(pdfInfo(t, pdf)["Pages"])
	if err != nil {
		t.Fatalf("pdfinfo gives no page count: %v", err)
	}
	return n
}

// squash drops whitespace and hyphens: pdftotext joins a word broken over
// two lines and drops a hyphen at a line end.
func squash(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\n' || r == '\t' || r == '\f' || r == '-' {
			return -1
		}
		return r
	}, s)
}

// uris returns the targets of the link annotations in a PDF. Annotations
// sit in page objects, which fpdf does not compress.
func uris(pdf []byte) []string {
	var out []string
	for _, m := range regexp.MustCompile(`/URI \(((?:[^\\)]|\\.)*)\)`).FindAllSubmatch(pdf, -1) {
		out = append(out, strings.NewReplacer(`\(`, "(", `\)`, ")", `\\`, `\`).Replace(string(m[1])))
	}
	return out
}

func readTestdata(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPDFReports(t *testing.T) {
	date := time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		file  string
		opts  Options
		title string
		text  []string // must appear in the extracted text, as lines are joined
		urls  []string // must be link targets and appear in the text
	}{{
		file:  "report_ru.md",
		opts:  Options{Date: date, Author: "Sova"},
		title: "Экономика США в 1930-х годах",
		text: []string{
			"4 марта 2025 г.",
			"Краткое содержание", "Причины кризиса", "Основные показатели", "Новый курс",
			"Спад 1937–1938 годов", "Выводы", "Источники",
			"Крах фондового рынка", "Отсутствие страхования вкладов усиливало панику.",
			"отказ от золотого стандарта в 1933 году и девальвацию доллара;",
			"«Единственное, чего нам следует бояться, — это самого страха».",
			"Безработица, %", "103,6", "24,9", "111,0", "Индекс цен (1929 = 100)",
			`print(f"Падение ВВП: {drop:.1%}")`,
			"стабильности банковской системы",
		},
		urls: []string{
			"https://www.federalreservehistory.org/essays/great-depression",
			"https://www.britannica.com/money/Great-Depression",
			"https://fraser.stlouisfed.org/title/economics-recession-1937-38-4967?browse=1930s&start_page=1&results_per_page=20",
			"https://www.nber.org/system/files/working_papers/w1054/w1054.pdf",
			"https://academic.oup.com/book/10963/chapter-abstract/159328477?redirectedFrom=fulltext&login=false",
			"https://www.jstor.org/stable/2123531?seq=1&utm_source=sova-report&utm_medium=pdf&utm_campaign=deep-research-very-long-parameter-value",
		},
	}, {
		file:  "report_en.md",
		opts:  Options{Title: "Lithium-Ion Battery Recycling: Technologies and Economics", Date: date, Language: "en"},
		title: "Lithium-Ion Battery Recycling: Technologies and Economics",
		text: []string{
			"March 4, 2025",
			"Executive Summary", "Process Families", "Pyrometallurgy", "Hydrometallurgy",
			"Direct Recycling", "Comparison", "Cost Model", "Recommendations", "Sources",
			"Shredding under inert atmosphere; separation of black mass.",
			"copper cementation;", "Precipitation of lithium carbonate.",
			"Lithium recovery", "High (>90 %)", "Technology readiness", "Pilot", "Typical CO₂ (kg/kg)",
			"revenue += share * 1000 * pricePerKg[metal]",
			"Argonne National Laboratory — EverBatt model",
		},
		urls: []string{
			"https://www.iea.org/reports/global-ev-outlook-2024",
			"https://www.nature.com/articles/s41586-019-1682-5",
			"https://recellcenter.org/research/direct-cathode-recycling/?utm_source=newsletter&utm_medium=email&utm_campaign=2024-annual-review-very-long-campaign-name",
			"https://eur-lex.europa.eu/legal-content/EN/TXT/?uri=CELEX%3A32023R1542&qid=1700000000000&from=EN&extra=averyveryveryveryverylongparametervaluewithoutanybreakopportunitiesatall",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			pdf := render(t, readTestdata(t, tt.file), tt.opts)

			// Links are there whatever tools are installed.
			targets := map[string]bool{}
			for _, u := range uris(pdf) {
				targets[u] = true
			}
			for _, u := range tt.urls {
				if !targets[u] {
					t.Errorf("no link annotation to %s; have %v", u, uris(pdf))
				}
			}
			if !targets["https://www.anl.gov/amd/everbatt"] && tt.file == "report_en.md" {
				t.Error("the Markdown link [..](https://www.anl.gov/amd/everbatt) is not clickable")
			}

			info := pdfInfo(t, pdf)
			if info["Title"] != tt.title {
				t.Errorf("metadata title = %q, want %q", info["Title"], tt.title)
			}
			if info["Creator"] != "Sova" {
				t.Errorf("metadata creator = %q, want Sova", info["Creator"])
			}
			if n := pageCount(t, pdf); n < 2 {
				t.Errorf("pages = %d, want the report over two pages at least", n)
			}

			text := pdfText(t, pdf)
			flat := strings.Join(strings.Fields(text), " ")
			if !strings.HasPrefix(flat, tt.title) {
				t.Errorf("text starts %q, want the title %q intact", flat[:min(len(flat), 80)], tt.title)
			}
			// The title block, and the running header of each further
			// page: the leading H1 is not repeated in the body.
			if c, pages := strings.Count(flat, tt.title), pageCount(t, pdf); c != pages {
				t.Errorf("title appears %d times in the text, want %d", c, pages)
			}
			if !regexp.MustCompile(`(?m)^1 ?/ ?2$`).MatchString(text) || !regexp.MustCompile(`(?m)^2 ?/ ?2$`).MatchString(text) {
				t.Error("pages are not numbered 1 / 2 and 2 / 2")
			}
			for _, want := range tt.text {
				if !strings.Contains(flat, want) {
					t.Errorf("text lacks %q", want)
				}
			}
			sq := squash(text)
			for _, u := range tt.urls {
				if !strings.Contains(sq, squash(u)) {
					t.Errorf("text lacks the URL %s", u)
				}
			}
			if strings.ContainsRune(text, '\uFFFD') {
				t.Error("text has replacement characters: a glyph is missing from the fonts")
			}
		})
	}
}

func TestPDFTitle(t *testing.T) {
	tests := []struct {
		name      string
		md        string
		opts      Options
		wantTitle string
		wantText  map[string]int // substring → times it appears
	}{
		{"title from the first heading", "# Отчёт о рынке\n\nТекст.", Options{},
			"Отчёт о рынке", map[string]int{"Отчёт о рынке": 1, "Текст.": 1}},
		{"given title equal to the heading", "# Market Report\n\nText.", Options{Title: "Market Report"},
			"Market Report", map[string]int{"Market Report": 1}},
		{"given title and another heading", "# Introduction\n\nText.", Options{Title: "Market Report"},
			"Market Report", map[string]int{"Market Report": 1, "Introduction": 1}},
		{"no title at all", "Just a paragraph.", Options{},
			"", map[string]int{"Just a paragraph.": 1}},
		{"title with spaces squeezed", "Body.", Options{Title: "  A\n  Title  "},
			"A Title", map[string]int{"A Title": 1}},
		{"overlong title is cut", "Body.", Options{Title: strings.Repeat("Заголовок ", 100)},
			strings.TrimSpace(strings.Repeat("Заголовок ", 30)) + "…", map[string]int{"Body.": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pdf := render(t, tt.md, tt.opts)
			if got := pdfInfo(t, pdf)["Title"]; got != tt.wantTitle {
				t.Errorf("metadata title = %q, want %q", got, tt.wantTitle)
			}
			text := pdfText(t, pdf)
			for s, n := range tt.wantText {
				if got := strings.Count(text, s); got != n {
					t.Errorf("%q appears %d times, want %d:\n%s", s, got, n, text)
				}
			}
		})
	}
}

func TestPDFEmpty(t *testing.T) {
	for _, md := range []string{"", "   \n\n\t\n", "<!-- -->\n"} {
		pdf := render(t, md, Options{})
		if n := pageCount(t, pdf); n != 1 {
			t.Errorf("%q: pages = %d, want 1", md, n)
		}
	}
}

func TestPDFTooLarge(t *testing.T) {
	err := PDF(io.Discard, strings.Repeat("a", MaxInput+1), Options{})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	if !strings.Contains(err.Error(), strconv.Itoa(MaxInput)) {
		t.Errorf("error %q does not name the limit", err)
	}
	// A document within the input limit that would run past MaxPages.
	err = PDF(io.Discard, strings.Repeat("## H\n", 100_000), Options{})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "pages") {
		t.Fatalf("err = %v, want ErrTooLarge about pages", err)
	}
}

// TestPDFConcurrent renders from several goroutines at once: PDF shares
// only read-only font data, which -race checks. The bytes may differ from
// run to run (fpdf orders glyphs in a font subset by map iteration), so the
// documents are compared by their links and text.
func TestPDFConcurrent(t *testing.T) {
	md := readTestdata(t, "report_ru.md")
	opts := Options{Date: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	want := render(t, md, opts)
	outs := make([][]byte, 4)
	errs := make([]error, len(outs))
	var wg sync.WaitGroup
	for i := range outs {
		wg.Go(func() {
			var buf bytes.Buffer
			errs[i] = PDF(&buf, md, opts)
			outs[i] = buf.Bytes()
		})
	}
	wg.Wait()
	for i, out := range outs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if strings.Join(uris(out), " ") != strings.Join(uris(want), " ") {
			t.Errorf("document %d has other links", i)
		}
	}
	wantText := pdfText(t, want)
	for i, out := range outs {
		if pdfText(t, out) != wantText {
			t.Errorf("document %d has other text", i)
		}
	}
}

// longReport is a report of n sections, about two thirds of a page each.
func longReport(n int) string {
	var b strings.Builder
	b.WriteString("# Обзор рынка: длинный отчёт\n\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "## Раздел %d. Section %d\n\n", i, i)
		for p := 0; p < 3; p++ {
			b.WriteString("Рынок продолжал расти: **выручка** увеличилась, а *маржа* осталась стабильной. ")
			b.WriteString("The market kept growing while margins held, see [the dataset](https://example.org/data/2024?page=")
			fmt.Fprintf(&b, "%d) and `code()` for details. Дополнительный текст для объёма абзаца.\n\n", i)
		}
		b.WriteString("- первый пункт списка\n- second item with a long link https://example.com/a/very/long/path/that/keeps/going/on/and/on?with=query&and=more\n  1. вложенный пункт\n  2. nested item\n\n")
		b.WriteString("| Показатель | 2023 | 2024 |\n|---|--:|--:|\n| Выручка | 1 200 | 1 450 |\n| Прибыль | 310 | 355 |\n\n")
		b.WriteString("```\nfor i := range items { total += items[i].Price }\n```\n\n")
	}
	b.WriteString("## Источники\n\n")
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "%d. Source %d: https://example.com/reports/%d/very-long-path-segment/another-segment?utm_source=a&utm_medium=b\n", i, i, i)
	}
	return b.String()
}

func TestPDFLongReport(t *testing.T) {
	pdf := render(t, longReport(12), Options{Date: time.Date(2024, 12, 31, 0, 0, 0, 0, time.UTC), Language: "ru"})
	pages := pageCount(t, pdf)
	if pages < 5 {
		t.Fatalf("pages = %d, want a long report over several pages", pages)
	}
	text := pdfText(t, pdf)
	// Every page is numbered "n / total".
	for p := 1; p <= pages; p++ {
		if !regexp.MustCompile(fmt.Sprintf(`(?m)^%d ?/ ?%d$`, p, pages)).MatchString(text) {
			t.Errorf("no page number %d / %d", p, pages)
		}
	}
	// The running header repeats the title from page two on.
	if c := strings.Count(text, "Обзор рынка: длинный отчёт"); c != pages {
		t.Errorf("title appears %d times, want %d (title block and a header on each further page)", c, pages)
	}
	if !strings.Contains(text, "31 декабря 2024 г.") {
		t.Error("no Russian date under the title")
	}
	if n := len(uris(pdf)); n < 30+12 {
		t.Errorf("%d link annotations, want one at least for each of 30 sources and 12 dataset links", n)
	}
}

// TestPDFOdd renders Markdown a report should not contain, but might.
func TestPDFOdd(t *testing.T) {
	long := strings.Repeat("Донауд", 300)
	tests := []struct {
		name string
		md   string
		text []string // expected in the extracted text, squashed
		uris []string // expected link targets
	}{
		{"raw HTML block is shown", "<div class=\"x\">\n<b>bold?</b>\n</div>\n", []string{`<divclass="x">`, "<b>bold?</b>"}, nil},
		{"inline HTML is shown, br breaks", "a <span>b</span> c<br>d", []string{"a<span>b</span>c", "d"}, nil},
		{"image becomes alt text and link", "![Схема процесса](https://example.com/img.png)", []string{"Схемапроцесса(https://example.com/img.png)"}, []string{"https://example.com/img.png"}},
		{"image without alt", "![](https://example.com/i.png)", []string{"image(https://example.com/i.png)"}, []string{"https://example.com/i.png"}},
		{"data image is not a link", "![x](data:image/png;base64," + strings.Repeat("A", 5000) + ")", []string{"x(data:image/png;base64,AAAA"}, nil},
		{"script links are not clickable", "[click](javascript:alert(1)) [file](file:///etc/passwd)", []string{"click", "file"}, nil},
		{"autolinks", "see www.example.com and <https://example.org/x> or mail a@example.com", []string{"www.example.com", "https://example.org/x", "a@example.com"},
			[]string{"http://www.example.com", "https://example.org/x", "mailto:a@example.com"}},
		{"long word wraps", long, []string{long}, nil},
		{"long URL wraps and stays one link", "https://example.com/" + strings.Repeat("segment/", 60), []string{"https://example.com/" + strings.Repeat("segment/", 60)},
			[]string{"https://example.com/" + strings.Repeat("segment/", 60)}},
		{"emoji and CJK", "Итог 📈 рост 增长 ✓ done", []string{"Итогрост", "+done"}, nil},
		{"control characters", "a\x00b\x01c\x7fd\u200be", []string{"a"}, nil},
		{"entities and escapes", "&amp; &lt;tag&gt; &#1046; &#x416; \\*not emphasis\\* &nosuch;", []string{"&<tag>ЖЖ*notemphasis*&nosuch;"}, nil},
		{"deep quotes", strings.Repeat("> ", 200) + "глубоко", []string{"глубоко"}, nil},
		{"deep lists", func() string {
			var b strings.Builder
			for i := range 60 {
				b.WriteString(strings.Repeat("  ", i) + "- level " + strconv.Itoa(i) + "\n")
			}
			return b.String()
		}(), []string{"level0", "level59"}, nil},
		{"empty list items", "- \n- \n1. \n", nil, nil},
		{"unclosed fence", "```go\nfunc main() {", []string{"funcmain(){"}, nil},
		{"empty fence", "```\n```\n", nil, nil},
		{"table without body", "| a | b |\n|---|---|\n", []string{"a", "b"}, nil},
		{"ragged table", "| a | b | c |\n|---|---|---|\n| 1 |\n| 1 | 2 | 3 | 4 |\n", []string{"a", "1", "3"}, nil},
		{"wide table becomes text", "|" + strings.Repeat(" h |", 20) + "\n|" + strings.Repeat("---|", 20) + "\n|" + strings.Repeat(" v |", 20) + "\n", []string{"h|h|h", "v|v|v"}, nil},
		{"table with long URL cell", "| source | note |\n|---|---|\n| https://example.com/" + strings.Repeat("x", 400) + " | ok |\n", []string{"https://example.com/xxxx", "ok"}, nil},
		{"headings only", "# A\n## B\n### C\n#### D\n##### E\n###### F\n", []string{"B", "C", "D", "E", "F"}, nil},
		{"heading levels jump", "# T\n#### deep\n## up\n", []string{"deep", "up"}, nil},
		{"task list", "- [x] done\n- [ ] todo\n", []string{"■done", "□todo"}, nil},
		{"numbered task list", "1. [x] done\n2. [ ] todo\n", []string{"■done", "□todo"}, nil},
		{"thematic breaks", "---\n***\n___\n", nil, nil},
		{"setext headings", "Title\n=====\n\nSub\n---\n", []string{"Title", "Sub"}, nil},
		{"footnote syntax is a reference link", "Text[^1].\n\n[^1]: Note.", []string{"Text^1."}, nil},
		{"footnote without definition", "Text[^2].", []string{"Text[^2]."}, nil},
		{"reference links", "See [the source][1].\n\n[1]: https://example.com/ref", []string{"Seethesource."}, []string{"https://example.com/ref"}},
		{"CRLF line ends", "# T\r\n\r\n- a\r\n- b\r\n", []string{"a", "b"}, nil},
		{"tabs", "\tcode\n\n-\ta\tb", []string{"code", "a"}, nil},
		{"only a blockquote", "> цитата", []string{"цитата"}, nil},
		{"code in heading and link", "## The `run` [API](https://example.com/api)", []string{"Therun"}, []string{"https://example.com/api"}},
		{"strikethrough and nested emphasis", "~~old~~ ***both*** **b *i* b**", []string{"oldbothbib"}, nil},
		{"invalid UTF-8", "abc\xff\xfedef", []string{"abc"}, nil},
		{"many blank lines", strings.Repeat("\n", 10000) + "end", []string{"end"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pdf := render(t, tt.md, Options{Title: "Odd"})
			targets := map[string]bool{}
			for _, u := range uris(pdf) {
				targets[u] = true
				if !strings.HasPrefix(u, "http") && !strings.HasPrefix(u, "mailto:") {
					t.Errorf("clickable link to %q", u)
				}
			}
			for _, u := range tt.uris {
				if !targets[u] {
					t.Errorf("no link to %s; have %v", u, uris(pdf))
				}
			}
			if len(tt.text) == 0 {
				return
			}
			text := squash(pdfText(t, pdf))
			for _, want := range tt.text {
				if !strings.Contains(text, squash(want)) {
					t.Errorf("text lacks %q:\n%s", want, text)
				}
			}
		})
	}
}

// TestPDFPathological renders inputs on which Markdown parsers are known to
// take time that grows faster than the input; all must render quickly.
func TestPDFPathological(t *testing.T) {
	if testing.Short() {
		t.Skip("renders megabytes of input")
	}
	size := 256 << 10
	rep := func(s string) string { return strings.Repeat(s, size/len(s)) }
	var lists strings.Builder
	for i := 0; lists.Len() < size; i++ {
		lists.WriteString(strings.Repeat("  ", i) + "* a\n")
	}
	tests := map[string]string{
		"nested quotes":             rep("> ") + "a",
		"nested lists":              lists.String(),
		"nested brackets":           rep("[") + "a" + rep("]"),
		"unclosed link destination": rep("[a](<b"),
		"unclosed link title":       rep("[a](b \"x\n"),
		"unmatched emphasis":        rep("*a_ "),
		"emphasis multiple of 3":    "a**b" + rep("c* "),
		"nested emphasis":           rep("*a **a ") + "b" + rep(" a** a*"),
		"link openers":              rep("[a"),
		"wide table":                "|" + rep("a|") + "\n|" + rep("-|") + "\n",
		"wide table, many rows":     "|" + strings.Repeat("a|", 4000) + "\n|" + strings.Repeat("-|", 4000) + "\n" + rep("|b\n"),
		"table cell of brackets":    "|a|\n|-|\n|" + rep("[a](<b") + "|\n",
		"many small blocks":         rep(strings.Repeat("[", 60) + "\n\n"),
		"backticks":                 rep("e`` "),
		"one huge heading":          "# " + rep("слово "),
		"one huge table cell":       "| a | b |\n|---|---|\n| " + rep("word ") + " | x |\n",
		"one huge link":             "[" + rep("text ") + "](https://example.com)",
	}
	// Linear inputs of this size render in well under a second; the
	// bound leaves room for slow, instrumented test runs.
	const bound = 20 * time.Second
	for name, md := range tests {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			if err := PDF(io.Discard, md, Options{}); err != nil && !errors.Is(err, ErrTooLarge) {
				t.Fatal(err)
			}
			if d := time.Since(start); d > bound {
				t.Errorf("took %v for %d bytes", d, len(md))
			}
		})
	}
}

// TestPDFRandom renders random mixes of Markdown syntax: nothing may fail.
func TestPDFRandom(t *testing.T) {
	pieces := []string{
		"# ", "## ", "#### ", "> ", "- ", "* ", "1. ", "2) ", "   ", "\t", "\n", "\n\n", "```", "~~~", "    ",
		"|", "| a | b |\n|---|:-:|\n", "---", "***", "**", "*", "_", "__", "`", "``", "~~", "[", "]", "(", ")",
		"](", "![", "<", ">", "<br>", "<div>", "</div>", "<!--", "-->", "&amp;", "&#x0;", "&#1046;", "\\", "[^1]",
		"https://example.com/a/b?c=d&e=f", "www.example.ru", "a@b.co", "Ёжик", "Экономика", "word", "слово",
		"😀", "增长", "\x00", "\u200d", "\r", strings.Repeat("длинноеслово", 40), "[x](https://x.org)", "- [ ] ",
		"\n| c | d |\n", "1930-х", "—", "«», ", "\xd1", "\xff",
	}
	const seed = 0x5eed
	rng := newRand(seed)
	for i := range 30 {
		var b strings.Builder
		for range 20 + rng.intn(400) {
			b.WriteString(pieces[rng.intn(len(pieces))])
		}
		md := b.String()
		var out bytes.Buffer
		if err := PDF(&out, md, Options{}); err != nil {
			t.Fatalf("seed %d, document %d: %v\n%q", seed, i, err, md)
		}
		if !bytes.HasPrefix(out.Bytes(), []byte("%PDF-")) {
			t.Fatalf("seed %d, document %d: not a PDF", seed, i)
		}
		if i%10 == 0 {
			if _, err := exec.LookPath("pdfinfo"); err == nil {
				pageCount(t, out.Bytes()) // fails on a malformed file
			}
		}
	}
}

// rand is a small xorshift generator: the same documents every run.
type rand struct{ s uint64 }

func newRand(seed uint64) *rand { return &rand{s: seed | 1} }

func (r *rand) intn(n int) int {
	r.s ^= r.s << 13
	r.s ^= r.s >> 7
	r.s ^= r.s << 17
	return int(r.s % uint64(n))
}

func FuzzPDF(f *testing.F) {
	f.Add("# Заголовок\n\nТекст **жирный** и *курсив*, `код`, [ссылка](https://example.com).")
	f.Add("| a | b |\n|---|---|\n| 1 | 2 |\n")
	f.Add("> > > - 1. ```\ncode\n")
	f.Add("![img](https://x/y.png) <b>html</b> www.example.com")
	f.Add(strings.Repeat("[", 100) + strings.Repeat("*a_", 100))
	f.Fuzz(func(t *testing.T, md string) {
		var out bytes.Buffer
		err := PDF(&out, md, Options{})
		if err != nil && !errors.Is(err, ErrTooLarge) {
			t.Fatalf("%v", err)
		}
		if err == nil && !bytes.HasPrefix(out.Bytes(), []byte("%PDF-")) {
			t.Fatal("not a PDF")
		}
	})
}

// BenchmarkPDF renders a report of about twenty pages.
func BenchmarkPDF(b *testing.B) {
	md := longReport(33)
	opts := Options{Date: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	var out bytes.Buffer
	b.SetBytes(int64(len(md)))
	for b.Loop() {
		out.Reset()
		if err := PDF(&out, md, opts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(out.Len()), "pdf-bytes")
	b.ReportMetric(float64(len(regexp.MustCompile(`/Type /Page\b[^s]`).FindAll(out.Bytes(), -1))), "pages")
}
