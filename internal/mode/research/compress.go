package research

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// compressFindings merges the agents' notes into the material for the
// report (compress_findings_node): notes in the order written; notes that
// found nothing, repeated notes and repeated lines dropped; lines of page
// metadata and site furniture removed. Nothing else is cut: when the draft
// is short, the report is written from all of this.
func compressFindings(notes []*note) string {
	var b strings.Builder
	seenNote := map[string]bool{}
	seenLine := map[string]bool{}
	for _, n := range notes {
		if n.relevance == "low" && len(n.sources) == 0 {
			continue
		}
		key := lineKey(n.findings)
		if key == "" || seenNote[key] {
			continue
		}
		seenNote[key] = true
		body := cleanLines(n.findings, seenLine)
		var facts []string
		for _, f := range n.keyFacts {
			if c := cleanLines(f, seenLine); c != "" {
				facts = append(facts, c)
			}
		}
		if body == "" && len(facts) == 0 {
			continue
		}
		fmt.Fprintf(&b, "### %s (%s)\n\n", n.title, n.agent)
		if body != "" {
			b.WriteString(body + "\n\n")
		}
		if len(facts) > 0 {
			for _, f := range facts {
				fmt.Fprintf(&b, "- %s\n", strings.TrimLeft(f, "-*• "))
			}
			b.WriteString("\n")
		}
	}
	return strings.TrimSpace(b.String())
}

// metaRE matches a metadata label ("Published: …", "Источник: …");
// furnitureRE a short line of site furniture ("Read more", "Реклама").
var (
	metaRE      = regexp.MustCompile(`(?i)^\W*(url|link|source|sources|title|published|publication date|date|updated|last updated|author|retrieved|accessed|tags|categories|category|image|photo|credit|posted on|источник|источники|ссылка|заголовок|опубликовано|дата публикации|дата|обновлено|автор|теги|рубрика|фото)\s*[:：]`)
	furnitureRE = regexp.MustCompile(`(?i)^\W*(read more|continue reading|subscribe|sign up|log in|accept (all )?cookies|cookie|advertisement|sponsored|all rights reserved|copyright|©|share (this|on)|читать далее|подписывайтесь|подписаться|реклама|все права защищены|поделиться)`)
	urlOnlyRE   = regexp.MustCompile(`^\W*(https?://\S+)\W*$`)
	linkOnlyRE  = regexp.MustCompile(`^[-*•\d.)\s]*\[[^\]]*\]\([^)]*\)\s*$`)
	imageRE     = regexp.MustCompile(`!\[[^\]]*\]\([^)]*\)`)
)

// isNoise reports whether a line carries no finding.
func isNoise(line string) bool {
	t := strings.TrimSpace(line)
	switch {
	case t == "":
		return false
	case urlOnlyRE.MatchString(t), linkOnlyRE.MatchString(t), metaRE.MatchString(t):
		return true
	case furnitureRE.MatchString(t) && len([]rune(t)) <= 80:
		return true
	}
	return false
}

// cleanLines drops noise lines and lines already seen in earlier notes,
// and collapses blank lines.
func cleanLines(text string, seen map[string]bool) string {
	var out []string
	blank := false
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(imageRE.ReplaceAllString(line, ""), " \t")
		if strings.TrimSpace(line) == "" {
			blank = len(out) > 0
			continue
		}
		if isNoise(line) {
			continue
		}
		if k := lineKey(line); len([]rune(k)) >= 20 {
			if seen[k] {
				continue
			}
			seen[k] = true
		}
		if blank {
			out = append(out, "")
			blank = false
		}
		out = append(out, line)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// lineKey is text reduced to lower-case letters and digits, without
// citation markers, for spotting repeats that differ in punctuation.
func lineKey(s string) string {
	s = markerRE.ReplaceAllString(s, "")
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}
