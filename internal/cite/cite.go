// Package cite keeps an answer's citations honest. The model is shown the
// pages a run read, numbered 1..N; as its answer streams, every [n] marker is
// checked against those pages: markers for pages that were not read are
// dropped, and the rest are renumbered in order of first use, so the answer
// cites [1], [2], ... and its source list holds exactly the cited pages.
package cite

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sova-ai/sova"
)

// maxMarker bounds how much text is held back while a "[" might still turn
// out to be a citation; longer bracketed text is passed through.
const maxMarker = 32

// Filter rewrites citation markers in streamed text. It is not safe for
// concurrent use: one answer streams through one Filter.
type Filter struct {
	read    []sova.Source // what the model was shown, index n-1 for [n]
	mapping map[int]int   // shown number → published number
	cited   []sova.Source // published, in order of first citation
	onCite  func(sova.Source)
	pending strings.Builder
}

// NewFilter returns a Filter for an answer whose model was shown read[0] as
// [1], read[1] as [2], and so on. onCite, if not nil, is called once per
// source when it is first cited, with its published number set.
func NewFilter(read []sova.Source, onCite func(sova.Source)) *Filter {
	return &Filter{read: read, mapping: map[int]int{}, onCite: onCite}
}

// Write takes the next piece of model output and returns the text that can
// be shown now. Text that may be the start of a marker is held back until
// it is decided.
func (f *Filter) Write(delta string) string {
	var out strings.Builder
	for _, r := range delta {
		if f.pending.Len() == 0 {
			if r == '[' {
				f.pending.WriteRune(r)
			} else {
				out.WriteRune(r)
			}
			continue
		}
		f.pending.WriteRune(r)
		switch {
		case r == ']':
			out.WriteString(f.resolve(f.pending.String()))
			f.pending.Reset()
		case r == '[':
			// "[[" or "[x [": the earlier bracket was not a marker.
			p := f.pending.String()
			out.WriteString(p[:len(p)-1])
			f.pending.Reset()
			f.pending.WriteRune('[')
		case !isMarkerRune(r) || f.pending.Len() > maxMarker:
			out.WriteString(f.pending.String())
			f.pending.Reset()
		}
	}
	return out.String()
}

// Extend adds sources shown to the model after the filter was made, such
// as an agent's later tool results: they become [len+1], [len+2], ….
func (f *Filter) Extend(srcs ...sova.Source) {
	f.read = append(f.read, srcs...)
}

// Flush returns any held-back text at the end of the answer.
func (f *Filter) Flush() string {
	s := f.pending.String()
	f.pending.Reset()
	return s
}

// Cited returns the cited sources with their published numbers, in order.
func (f *Filter) Cited() []sova.Source {
	return append([]sova.Source(nil), f.cited...)
}

func isMarkerRune(r rune) bool {
	return r >= '0' && r <= '9' || r == ',' || r == ' ' || r == ';' || r == '-' || r == '–'
}

// resolve turns a complete bracketed group such as "[2, 7]" into the
// published form ("[1][3]"), dropping numbers that point at no read page.
func (f *Filter) resolve(group string) string {
	inner := strings.TrimSuffix(strings.TrimPrefix(group, "["), "]")
	nums, ok := parseNumbers(inner)
	if !ok {
		return group // not a citation: "[]", "[ ]", "[a-b]" never reach here, "[-]" does
	}
	var out strings.Builder
	seen := map[int]bool{}
	for _, n := range nums {
		pub, ok := f.publish(n)
		if !ok || seen[pub] {
			continue
		}
		seen[pub] = true
		out.WriteString("[" + strconv.Itoa(pub) + "]")
	}
	return out.String()
}

func (f *Filter) publish(n int) (int, bool) {
	if n < 1 || n > len(f.read) {
		return 0, false
	}
	if pub, ok := f.mapping[n]; ok {
		return pub, true
	}
	pub := len(f.cited) + 1
	f.mapping[n] = pub
	src := f.read[n-1]
	src.Number = pub
	f.cited = append(f.cited, src)
	if f.onCite != nil {
		f.onCite(src)
	}
	return pub, true
}

// parseNumbers reads "1", "1, 2", "1;3", "2-4" (a range) into numbers. It
// reports false when the text holds no number at all.
func parseNumbers(s string) ([]int, bool) {
	var nums []int
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' }) {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		sep := strings.IndexAny(part, "-–")
		if sep < 0 {
			n, err := strconv.Atoi(part)
			if err != nil {
				return nil, false
			}
			nums = append(nums, n)
			continue
		}
		_, w := utf8.DecodeRuneInString(part[sep:])
		lo, err1 := strconv.Atoi(strings.TrimSpace(part[:sep]))
		hi, err2 := strconv.Atoi(strings.TrimSpace(part[sep+w:]))
		if err1 != nil || err2 != nil || hi < lo || hi-lo > 20 {
			return nil, false
		}
		for n := lo; n <= hi; n++ {
			nums = append(nums, n)
		}
	}
	return nums, len(nums) > 0
}

// Apply filters a complete text at once.
func Apply(text string, read []sova.Source) (string, []sova.Source) {
	f := NewFilter(read, nil)
	out := f.Write(text) + f.Flush()
	return out, f.Cited()
}
