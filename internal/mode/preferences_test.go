package mode

import (
	"strings"
	"testing"
)

func TestPreferencesNote(t *testing.T) {
	long := strings.Repeat("x", 500)
	tests := []struct {
		name  string
		prefs map[string]string
		lang  string
		want  []string // lines expected, in order
		not   []string
		empty bool
	}{
		{name: "nothing", prefs: nil, empty: true},
		{name: "only bookkeeping", prefs: map[string]string{"interview.completed": "true", "interview.role": "  "}, empty: true},
		{name: "interview order and labels", prefs: map[string]string{
			"interview.priorities": "the Q3 launch", "interview.role": "CTO, call me Anna", "interview.completed": "true",
		}, lang: "en", want: []string{"The person's preferences", "- Role and how to address them: CTO, call me Anna", "- Current priorities: the Q3 launch"}, not: []string{"completed"}},
		{name: "russian", prefs: map[string]string{"interview.style": "кратко,\n по-русски"}, lang: "ru",
			want: []string{"Предпочтения человека", "- Ответы (длина, язык): кратко, по-русски"}},
		{name: "other keys after, sorted", prefs: map[string]string{"b_key": "2", "a_key": "1", "interview.avoid": "calls on Friday"},
			want: []string{"- Avoid or keep in mind: calls on Friday", "- a key: 1", "- b key: 2"}},
		{name: "long value clipped", prefs: map[string]string{"role": long}, not: []string{long}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PreferencesNote(tt.prefs, tt.lang)
			if tt.empty {
				if got != "" {
					t.Fatalf("want empty, got %q", got)
				}
				return
			}
			pos := -1
			for _, w := range tt.want {
				i := strings.Index(got, w)
				if i < 0 || i < pos {
					t.Fatalf("%q missing or out of order in\n%s", w, got)
				}
				pos = i
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("%q should not be in\n%s", n, got)
				}
			}
		})
	}
	many := map[string]string{}
	for i := range 30 {
		many[strings.Repeat("k", i+1)] = "v"
	}
	if n := strings.Count(PreferencesNote(many, ""), "\n- "); n != maxPreferences {
		t.Errorf("%d preference lines, want at most %d", n, maxPreferences)
	}
}
