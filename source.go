package sova

// Source kinds.
const (
	SourceWeb      = "web"
	SourceDocument = "document"
)

// Source is something an answer can cite. Number is the citation number
// ([n]) once the source is cited; 0 while it is only a candidate.
type Source struct {
	Number    int    `json:"number,omitempty"`
	URL       string `json:"url"`
	Title     string `json:"title,omitempty"`
	Snippet   string `json:"snippet,omitempty"`
	Kind      string `json:"kind,omitempty"`
	Published string `json:"published,omitempty"`
	Favicon   string `json:"favicon,omitempty"`
	// SnippetOnly marks a cited web source the run never read: what the
	// answer took from it is the search engine's snippet of the page
	// (search when no page could be read, docs' web results). A cited
	// source without it is a page the run read, or a passage of the
	// person's documents.
	SnippetOnly bool `json:"snippetOnly,omitempty"`
	// Passages, for a web page longer than what the model reads of it,
	// are the headings of the parts that were read: the passages chosen
	// for the question sit under them. Empty when the whole page was read,
	// or when the page has no headings.
	Passages []string `json:"passages,omitempty"`
}

// Usage is token usage.
type Usage struct {
	InputTokens  int `json:"inputTokens"`
	OutputTokens int `json:"outputTokens"`
	TotalTokens  int `json:"totalTokens"`
}

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{u.InputTokens + o.InputTokens, u.OutputTokens + o.OutputTokens, u.TotalTokens + o.TotalTokens}
}

// WithTotal fills TotalTokens when a producer left it out.
func (u Usage) WithTotal() Usage {
	if u.TotalTokens == 0 {
		u.TotalTokens = u.InputTokens + u.OutputTokens
	}
	return u
}
