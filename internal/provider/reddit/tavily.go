package reddit

import (
	"context"
	"regexp"
	"strings"
	"time"

	"github.com/sova-ai/sova/internal/provider/tavily"
)

// searchTavily runs the search through Tavily, restricted to reddit.com
// (000 §3.3). A named subreddit stays in the query text and only posts from
// it are kept.
func (c *Client) searchTavily(ctx context.Context, q Query, sub string) ([]Post, error) {
	limit := min(q.MaxResults, tavily.MaxResults)
	req := tavily.Request{
		Query:             q.Text,
		MaxResults:        limit,
		SearchDepth:       "advanced",
		Topic:             "general",
		ChunksPerSource:   5,
		IncludeDomains:    []string{"reddit.com"},
		IncludeRawContent: "markdown",
	}
	if q.Text == "" {
		req.Query = "r/" + sub
	}
	if q.TimeRange != "all" {
		req.TimeRange = q.TimeRange
	}
	resp, err := c.tavily.Search(ctx, req)
	if err != nil {
		return nil, err
	}
	posts := make([]Post, 0, len(resp.Results))
	for _, r := range resp.Results {
		u := strings.TrimSpace(r.URL)
		if u == "" {
			continue
		}
		rsub, id := urlParts(u)
		if sub != "" && !strings.EqualFold(rsub, sub) {
			continue
		}
		p := Post{
			ID:           id,
			Title:        strings.TrimSpace(r.Title),
			URL:          u,
			Subreddit:    rsub,
			Created:      parseDate(string(r.PublishedDate)),
			Content:      clip(r.Content, contentRunes),
			IsRedditPost: strings.Contains(u, "/comments/"),
			Comments:     CommentsFromText(string(r.RawContent)),
			Relevance:    r.Score,
			Source:       "tavily",
		}
		posts = append(posts, p)
		if len(posts) == limit {
			break
		}
	}
	return posts, nil
}

var (
	// commentLineRE matches a "username: comment text" line (000 §3.3), with
	// an optional list marker, quote or u/ prefix.
	commentLineRE = regexp.MustCompile(`^\s*(?:[-*>]\s*)?(?:\*\*)?(?:u/)?([A-Za-z0-9_-]{3,20})(?:\*\*)?\s*:\s+(\S.{9,})$`)
	// notAuthors are words that end in a colon in ordinary text.
	notAuthors = map[string]bool{
		"edit": true, "update": true, "note": true, "source": true, "sources": true, "summary": true,
		"answer": true, "question": true, "example": true, "warning": true, "reply": true, "comment": true,
		"comments": true, "step": true, "title": true, "post": true, "posted": true, "date": true, "tldr": true,
		"pros": true, "cons": true, "context": true, "edit2": true, "result": true, "results": true, "error": true,
		"output": true, "input": true, "solution": true, "issue": true, "problem": true, "also": true, "ps": true,
	}
)

// CommentsFromText picks comments out of a page's text where they appear
// as "username: comment text" lines (000 §3.3), at most DefaultComments.
// It is a heuristic for pages read through Tavily; ReadPost gets real
// comments.
func CommentsFromText(text string) []Comment {
	var out []Comment
	for _, line := range strings.Split(text, "\n") {
		m := commentLineRE.FindStringSubmatch(line)
		if m == nil || notAuthors[strings.ToLower(m[1])] {
			continue
		}
		body := strings.TrimSpace(tagRE.ReplaceAllString(m[2], ""))
		if body == "" {
			continue
		}
		out = append(out, Comment{Author: m[1], Body: clip(body, commentRunes)})
		if len(out) == DefaultComments {
			break
		}
	}
	return out
}

// parseDate reads the dates Tavily gives ("2024-05-20T10:00:00Z",
// "Mon, 20 May 2024 10:00:00 GMT", "2024-05-20").
func parseDate(s string) time.Time {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339, time.RFC1123, time.RFC1123Z, "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}
