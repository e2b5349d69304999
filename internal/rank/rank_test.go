package rank

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestTokenize(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"english stopwords and punctuation", "The engines, of the search!", []string{"engin", "search"}},
		{"english plurals", "engine engines city cities search searches", []string{"engin", "engin", "citi", "citi", "search", "search"}},
		{"russian cases", "Москва, Москвы и москве", []string{"москв", "москв", "москв"}},
		{"yo folds into ye", "Ёлки ёлка елка", []string{"елк", "елк", "елк"}},
		{"mixed scripts per token", "Поиск по web-страницам", []string{"поиск", "web", "страниц"}},
		{"digits kept", "Go 1.26 release", []string{"go", "1", "26", "releas"}},
		{"other scripts unstemmed", "東京 tokyo", []string{"東京", "tokyo"}},
		{"only stopwords", "the of и в", nil},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Tokenize(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("Tokenize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestRussianFormsMatch(t *testing.T) {
	forms := []string{"Москва", "Москвы", "москве", "Москвой", "МОСКВУ"}
	for _, q := range forms {
		for _, d := range forms {
			s := BM25(q, []Doc{{Text: "погода " + d}, {Text: "погода Петербург"}}, DefaultK1, DefaultB)
			if s[0].Score <= 0 || s[1].Score != 0 {
				t.Errorf("query %q vs doc %q: scores %v, want doc 0 > 0 and doc 1 == 0", q, d, s)
			}
		}
	}
}

func TestEnglishPluralsMatch(t *testing.T) {
	s := BM25("search engine", []Doc{{Text: "Comparing search engines"}, {Text: "Cooking pasta"}}, DefaultK1, DefaultB)
	if s[0].Score <= 0 || s[1].Score != 0 {
		t.Fatalf("scores %v, want the plural document to match", s)
	}
}

func TestRerank(t *testing.T) {
	docs := []Doc{
		{ID: "recipe", Text: "A simple recipe for tomato soup with basil."},
		{ID: "weather-msk", Text: "Погода в Москве: прогноз погоды на неделю, температура и осадки."},
		{ID: "moscow-history", Text: "История Москвы начинается в 1147 году."},
		{ID: "weather-spb", Text: "Прогноз погоды в Санкт-Петербурге на выходные."},
		{ID: "unrelated", Text: "Go generics tutorial."},
	}
	tests := []struct {
		name  string
		query string
		topK  int
		want  []string
	}{
		{
			name:  "relevant first, zero-overlap after in input order",
			query: "погода Москва",
			want:  []string{"weather-msk", "moscow-history", "weather-spb", "recipe", "unrelated"},
		},
		{name: "topK truncates", query: "погода Москва", topK: 2, want: []string{"weather-msk", "moscow-history"}},
		{name: "english", query: "tomato soups recipes", topK: 1, want: []string{"recipe"}},
		{
			name:  "no query terms keeps input order",
			query: "the and и",
			want:  []string{"recipe", "weather-msk", "moscow-history", "weather-spb", "unrelated"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Rerank(tt.query, docs, tt.topK)
			ids := make([]string, len(got))
			for i, s := range got {
				ids[i] = docs[s.Index].ID
			}
			if !slices.Equal(ids, tt.want) {
				t.Errorf("Rerank(%q) = %v (%v), want %v", tt.query, ids, got, tt.want)
			}
			for i := 1; i < len(got); i++ {
				if got[i].Score > got[i-1].Score {
					t.Errorf("not sorted by score: %v", got)
				}
			}
		})
	}
}

func TestBM25(t *testing.T) {
	t.Run("input order and indices", func(t *testing.T) {
		docs := []Doc{{Text: "cats"}, {Text: "dogs and cats"}, {Text: "dogs"}}
		got := BM25("dog", docs, DefaultK1, DefaultB)
		if len(got) != 3 {
			t.Fatalf("len = %d, want 3", len(got))
		}
		for i, s := range got {
			if s.Index != i {
				t.Errorf("got[%d].Index = %d", i, s.Index)
			}
		}
		if got[0].Score != 0 || got[1].Score <= 0 || got[2].Score <= got[1].Score {
			t.Errorf("scores %v: want 0 < longer doc < shorter doc", got)
		}
	})
	t.Run("rarer term weighs more", func(t *testing.T) {
		docs := []Doc{
			{Text: "golang tutorial"},
			{Text: "golang concurrency"},
			{Text: "golang generics"},
			{Text: "rust concurrency"},
		}
		got := BM25("golang concurrency", docs, DefaultK1, DefaultB)
		if !(got[1].Score > got[0].Score && got[3].Score > got[0].Score) {
			t.Errorf("scores %v: the rarer term 'concurrency' should outweigh 'golang'", got)
		}
	})
	t.Run("empty docs", func(t *testing.T) {
		if got := BM25("x", nil, DefaultK1, DefaultB); len(got) != 0 {
			t.Errorf("got %v", got)
		}
	})
	t.Run("term frequency saturates", func(t *testing.T) {
		docs := []Doc{{Text: "spam"}, {Text: strings.Repeat("spam ", 100)}, {Text: "other"}}
		got := BM25("spam", docs, DefaultK1, DefaultB)
		if got[1].Score > got[0].Score*(DefaultK1+1) {
			t.Errorf("scores %v: repetition should saturate", got)
		}
	})
}

func TestBM25AllocationsDoNotGrowWithDocs(t *testing.T) {
	small, large := benchDocs(50), benchDocs(500) // same vocabulary
	query := "search engine ranking Москва"
	a50 := testing.AllocsPerRun(20, func() { BM25(query, small, DefaultK1, DefaultB) })
	a500 := testing.AllocsPerRun(20, func() { BM25(query, large, DefaultK1, DefaultB) })
	if a500 > a50+5 {
		t.Errorf("allocations grow with documents: %v for 50 docs, %v for 500", a50, a500)
	}
}

func benchDocs(n int) []Doc {
	words := strings.Fields(`search engine results ranking relevance query document index
		поиск системы результаты ранжирование запрос документ индекс Москва погода новости
		server binary self hosted open source privacy language model answer citation`)
	docs := make([]Doc, n)
	for i := range docs {
		var sb strings.Builder
		for j := 0; j < 120; j++ {
			sb.WriteString(words[(i*7+j*13)%len(words)])
			sb.WriteByte(' ')
		}
		docs[i] = Doc{ID: fmt.Sprint(i), Text: sb.String()}
	}
	return docs
}

func BenchmarkRerank50(b *testing.B) {
	docs := benchDocs(50)
	b.ReportAllocs()
	for b.Loop() {
		Rerank("self-hosted search engine ranking Москва", docs, 10)
	}
}
