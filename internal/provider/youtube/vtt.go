package youtube

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Cue is one caption of a WebVTT file.
type Cue struct {
	Start time.Duration
	End   time.Duration
	Text  string // tags and entities removed, lines joined by spaces
}

// ParseVTT reads a WebVTT file. Cue identifiers, settings, NOTE, STYLE and
// REGION blocks are ignored; inline tags (<c>, <i>, <00:00:01.000>) and
// entities are removed. Lines a cue repeats from the previous one, as
// YouTube's generated captions scroll, are dropped.
func ParseVTT(data []byte) ([]Cue, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	text := strings.ReplaceAll(strings.ReplaceAll(string(data), "\r\n", "\n"), "\r", "\n")
	if !strings.HasPrefix(text, "WEBVTT") {
		return nil, errors.New("the file does not start with WEBVTT")
	}
	var (
		cues    []Cue
		prev    []string
		timings int
		bad     int
		badErr  error
	)
	for _, block := range strings.Split(text, "\n\n") {
		lines := strings.Split(strings.Trim(block, "\n"), "\n")
		at := -1
		for i, l := range lines {
			if strings.Contains(l, "-->") {
				at = i
				break
			}
		}
		if at < 0 || strings.HasPrefix(lines[0], "NOTE") {
			continue
		}
		timings++
		start, end, err := parseTiming(lines[at])
		if err != nil {
			bad++
			if badErr == nil {
				badErr = err
			}
			continue
		}
		var kept, all []string
		for _, l := range lines[at+1:] {
			l = cleanCueLine(l)
			if l == "" {
				continue
			}
			all = append(all, l)
			if !contains(prev, l) {
				kept = append(kept, l)
			}
		}
		prev = all
		if len(kept) == 0 {
			continue
		}
		cues = append(cues, Cue{Start: start, End: end, Text: strings.Join(kept, " ")})
	}
	// A few broken cues are skipped; a file of mostly broken ones is not
	// WebVTT at all.
	if bad > 0 && bad*2 >= timings {
		return nil, badErr
	}
	return cues, nil
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func cleanCueLine(l string) string {
	l = tagRE.ReplaceAllString(l, "")
	l = html.UnescapeString(l)
	l = strings.ReplaceAll(l, "\u00a0", " ")
	return strings.Join(strings.Fields(l), " ")
}

// parseTiming reads "00:01:02.500 --> 00:01:04.000 align:start".
func parseTiming(line string) (time.Duration, time.Duration, error) {
	left, right, _ := strings.Cut(line, "-->")
	start, err := parseVTTTime(strings.TrimSpace(left))
	if err != nil {
		return 0, 0, err
	}
	fields := strings.Fields(right)
	if len(fields) == 0 {
		return 0, 0, fmt.Errorf("cue timing %q has no end", line)
	}
	end, err := parseVTTTime(fields[0])
	if err != nil {
		return 0, 0, err
	}
	return start, end, nil
}

// parseVTTTime reads "hh:mm:ss.ttt" or "mm:ss.ttt" (a comma is accepted
// for the dot).
func parseVTTTime(s string) (time.Duration, error) {
	bad := fmt.Errorf("bad cue time %q", s)
	s = strings.Replace(s, ",", ".", 1)
	secPart, frac, _ := strings.Cut(s, ".")
	parts := strings.Split(secPart, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, bad
	}
	var total time.Duration
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return 0, bad
		}
		unit := []time.Duration{time.Second, time.Minute, time.Hour}[len(parts)-1-i]
		total += time.Duration(n) * unit
	}
	if frac != "" {
		if len(frac) > 3 {
			frac = frac[:3]
		}
		for len(frac) < 3 {
			frac += "0"
		}
		ms, err := strconv.Atoi(frac)
		if err != nil {
			return 0, bad
		}
		total += time.Duration(ms) * time.Millisecond
	}
	return total, nil
}

// Segments groups cues into segments that each cover at most window of the
// video, link to their start, and together hold at most maxChars runes of
// text (maxChars < 0: no cap). It reports whether text was left out.
func Segments(id string, cues []Cue, window time.Duration, maxChars int) ([]Segment, bool) {
	if window <= 0 {
		window = DefaultSegmentWindow
	}
	var (
		segs  []Segment
		texts []string
	)
	flush := func() {
		if len(texts) > 0 {
			segs[len(segs)-1].Text = strings.Join(texts, " ")
			texts = texts[:0]
		}
	}
	for _, c := range cues {
		if len(segs) == 0 || c.Start-segs[len(segs)-1].Start >= window {
			flush()
			segs = append(segs, Segment{Start: c.Start, Timestamp: Timestamp(c.Start), URL: WatchURL(id, c.Start)})
		}
		texts = append(texts, c.Text)
	}
	flush()
	if maxChars < 0 {
		return segs, false
	}
	used := 0
	for i, s := range segs {
		n := utf8.RuneCountInString(s.Text)
		if used+n > maxChars {
			if left := maxChars - used; left > 0 && i == 0 {
				segs[0].Text = clip(s.Text, left)
				return segs[:1], true
			}
			return segs[:i], true
		}
		used += n
	}
	return segs, false
}
