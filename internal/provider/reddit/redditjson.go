package reddit

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// searchReddit runs Reddit's JSON search: /search.json, or
// /r/{sub}/search.json?restrict_sr=1 when a subreddit was named (its top
// posts when nothing else was asked).
func (c *Client) searchReddit(ctx context.Context, q Query, sub, rest string) ([]Post, error) {
	limit := min(q.MaxResults, MaxResults)
	v := url.Values{}
	v.Set("t", q.TimeRange)
	v.Set("limit", strconv.Itoa(limit))
	v.Set("raw_json", "1")
	var path string
	switch {
	case sub != "" && rest == "":
		path = "/r/" + sub + "/top.json"
	case sub != "":
		path = "/r/" + sub + "/search.json"
		v.Set("q", rest)
		v.Set("restrict_sr", "1")
		v.Set("sort", q.Sort)
		v.Set("type", "link")
	default:
		path = "/search.json"
		v.Set("q", q.Text)
		v.Set("sort", q.Sort)
		v.Set("type", "link")
	}
	var l listing
	if err := c.reddit.GetJSON(ctx, c.redditBase+path+"?"+v.Encode(), nil, &l); err != nil {
		return nil, err
	}
	if l.Kind != "Listing" {
		return nil, c.reddit.Errorf(ErrBadResponse, nil, "the answer is not a listing (kind %q)", l.Kind)
	}
	posts := make([]Post, 0, min(limit, len(l.Data.Children)))
	for _, ch := range l.Data.Children {
		if len(posts) == limit {
			break
		}
		if ch.Kind != "t3" {
			continue
		}
		var d postData
		if err := json.Unmarshal(ch.Data, &d); err != nil {
			return nil, c.reddit.Errorf(ErrBadResponse, err, "a post in the answer is malformed")
		}
		if p, ok := d.post(); ok {
			posts = append(posts, p)
		}
	}
	return posts, nil
}

// ReadPost reads the post a Reddit URL points to (any form PostID accepts)
// with its top maxComments top-level comments (0: DefaultComments).
func (c *Client) ReadPost(ctx context.Context, postURL string, maxComments int) (Post, error) {
	id, ok := PostID(postURL)
	if !ok {
		return Post{}, c.reddit.Errorf(nil, nil, "%q is not a Reddit post URL", postURL)
	}
	if maxComments <= 0 {
		maxComments = DefaultComments
	}
	maxComments = min(maxComments, MaxComments)
	v := url.Values{}
	v.Set("sort", "top")
	v.Set("limit", strconv.Itoa(maxComments))
	v.Set("depth", "1")
	v.Set("raw_json", "1")
	var ls []listing
	if err := c.reddit.GetJSON(ctx, c.redditBase+"/comments/"+id+".json?"+v.Encode(), nil, &ls); err != nil {
		return Post{}, err
	}
	if len(ls) == 0 || len(ls[0].Data.Children) == 0 || ls[0].Data.Children[0].Kind != "t3" {
		return Post{}, c.reddit.Errorf(ErrBadResponse, nil, "the answer for post %s holds no post", id)
	}
	var d postData
	if err := json.Unmarshal(ls[0].Data.Children[0].Data, &d); err != nil {
		return Post{}, c.reddit.Errorf(ErrBadResponse, err, "post %s is malformed", id)
	}
	p, ok := d.post()
	if !ok {
		return Post{}, c.reddit.Errorf(ErrBadResponse, nil, "post %s has no title or permalink", id)
	}
	if len(ls) > 1 {
		var comments []Comment
		for _, ch := range ls[1].Data.Children {
			if ch.Kind != "t1" {
				continue // "more" placeholders
			}
			var cd commentData
			if err := json.Unmarshal(ch.Data, &cd); err != nil {
				return Post{}, c.reddit.Errorf(ErrBadResponse, err, "a comment of post %s is malformed", id)
			}
			if cm, ok := cd.comment(); ok {
				comments = append(comments, cm)
			}
		}
		sort.SliceStable(comments, func(i, j int) bool { return comments[i].Score > comments[j].Score })
		if len(comments) > maxComments {
			comments = comments[:maxComments]
		}
		p.Comments = comments
	}
	return p, nil
}

// describeReddit reads Reddit's error body {"message": "Forbidden",
// "error": 403, "reason": "private"}.
func describeReddit(status int, body []byte) (string, bool) {
	var e struct {
		Message string `json:"message"`
		Reason  string `json:"reason"`
	}
	detail := ""
	if json.Unmarshal(body, &e) == nil {
		detail = strings.TrimSpace(e.Message)
		if e.Reason != "" {
			detail = strings.TrimSpace(detail + " (" + e.Reason + ")")
		}
	}
	if status == http.StatusForbidden && detail == "" {
		detail = "Reddit refused the request; it often refuses anonymous API requests from servers (set TAVILY_API_KEY to search Reddit through Tavily)"
	}
	return detail, false
}

type listing struct {
	Kind string `json:"kind"`
	Data struct {
		After    string  `json:"after"`
		Children []thing `json:"children"`
	} `json:"data"`
}

type thing struct {
	Kind string          `json:"kind"`
	Data json.RawMessage `json:"data"`
}

type postData struct {
	ID          string  `json:"id"`
	Title       string  `json:"title"`
	Subreddit   string  `json:"subreddit"`
	Author      string  `json:"author"`
	Selftext    string  `json:"selftext"`
	Permalink   string  `json:"permalink"`
	URL         string  `json:"url"`
	Score       int     `json:"score"`
	NumComments int     `json:"num_comments"`
	CreatedUTC  float64 `json:"created_utc"`
	IsSelf      bool    `json:"is_self"`
	Over18      bool    `json:"over_18"`
}

func (d postData) post() (Post, bool) {
	p := Post{
		ID:           d.ID,
		Title:        strings.TrimSpace(d.Title),
		Subreddit:    d.Subreddit,
		Author:       d.Author,
		Score:        d.Score,
		NumComments:  d.NumComments,
		Created:      unixTime(d.CreatedUTC),
		Content:      clip(d.Selftext, contentRunes),
		IsRedditPost: true,
		NSFW:         d.Over18,
		Source:       "reddit",
	}
	if d.Permalink != "" {
		p.URL = "https://www.reddit.com" + d.Permalink
	}
	if !d.IsSelf && d.URL != "" && !strings.Contains(d.URL, d.Permalink) {
		p.LinkURL = d.URL
	}
	if p.Content == "[removed]" || p.Content == "[deleted]" {
		p.Content = ""
	}
	return p, p.URL != "" && p.Title != ""
}

type commentData struct {
	ID         string  `json:"id"`
	Author     string  `json:"author"`
	Body       string  `json:"body"`
	Permalink  string  `json:"permalink"`
	Score      int     `json:"score"`
	CreatedUTC float64 `json:"created_utc"`
	Stickied   bool    `json:"stickied"`
}

// comment converts a t1 thing; deleted and removed comments and stickied
// moderator notes are left out.
func (d commentData) comment() (Comment, bool) {
	body := strings.TrimSpace(d.Body)
	if body == "" || body == "[deleted]" || body == "[removed]" || d.Stickied {
		return Comment{}, false
	}
	c := Comment{
		Author:  d.Author,
		Body:    clip(body, commentRunes),
		Score:   d.Score,
		Created: unixTime(d.CreatedUTC),
	}
	if d.Permalink != "" {
		c.URL = "https://www.reddit.com" + d.Permalink
	}
	return c, true
}

func unixTime(secs float64) time.Time {
	if secs <= 0 {
		return time.Time{}
	}
	return time.Unix(int64(secs), 0).UTC()
}
