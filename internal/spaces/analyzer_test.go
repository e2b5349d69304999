package spaces

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

func analyze(a *termAnalyzer, s string) []string {
	var out []string
	for _, tok := range a.Analyze([]byte(s)) {
		out = append(out, fmt.Sprintf("%s@%d:%s", tok.Term, tok.Position, s[tok.Start:tok.End]))
	}
	return out
}

func TestTermAnalyzer(t *testing.T) {
	a := newTermAnalyzer()
	tests := []struct {
		in   string
		want []string
	}{
		{"The Nation's four freedoms", []string{"nation@2:Nation's", "four@3:four", "freedom@4:freedoms"}},
		{"Свобода слова и ёлки", []string{"свобод@1:Свобода", "слов@2:слова", "елк@4:ёлки"}},
		{"Ёлка, ЕЛКИ", []string{"елк@1:Ёлка", "елк@2:ЕЛКИ"}},
		{"кластеры Kubernetes в 2024 году", []string{"кластер@1:кластеры", "kubernet@2:Kubernetes", "2024@4:2024", "год@5:году"}},
		{"don’t stop—we’re here", []string{"stop@2:stop"}},
		{"naïve café Ωμέγα", []string{"naïv@1:naïve", "café@2:café", "ωμέγα@3:Ωμέγα"}},
		{"", nil},
	}
	for _, tc := range tests {
		got := analyze(a, tc.in)
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("Analyze(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTermAnalyzerConcurrent(t *testing.T) {
	a := newTermAnalyzer()
	want := strings.Join(analyze(newTermAnalyzer(), "Прокуратура проверила бюджеты регионов and governments"), " ")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				if got := strings.Join(analyze(a, "Прокуратура проверила бюджеты регионов and governments"), " "); got != want {
					t.Errorf("concurrent analysis = %q, want %q", got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestTermOfOneWord(t *testing.T) {
	a := newTermAnalyzer()
	for word, want := range map[string]string{"Бюджетов": "бюджет", "budgets": "budget", "the": "", "и": ""} {
		got, ok := a.term(word)
		if got != want || ok != (want != "") {
			t.Errorf("term(%q) = %q, %v; want %q", word, got, ok, want)
		}
	}
}
