package youtube

import (
	"context"
	"encoding/json"
	"html"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// descriptionRunes caps a video description.
const descriptionRunes = 1000

// searchDataAPI runs search.list and completes the videos with videos.list,
// keeping search.list's order.
func (c *Client) searchDataAPI(ctx context.Context, query string, limit int, lang string) ([]Video, error) {
	q := url.Values{}
	q.Set("part", "snippet")
	q.Set("q", query)
	q.Set("type", "video")
	q.Set("maxResults", strconv.Itoa(limit))
	if lang = strings.TrimSpace(lang); lang != "" {
		q.Set("relevanceLanguage", lang)
	}
	q.Set("key", c.key)
	var resp searchListResponse
	if err := c.dataAPI.GetJSON(ctx, c.youtubeBase+"/search?"+q.Encode(), nil, &resp); err != nil {
		return nil, err
	}
	if resp.Items == nil {
		return nil, c.dataAPI.Errorf(ErrBadResponse, nil, "search.list answered without items")
	}
	var ids []string
	videos := make([]Video, 0, len(resp.Items))
	for _, it := range resp.Items {
		if it.ID.VideoID == "" || len(videos) == limit {
			continue
		}
		v := Video{
			ID:           it.ID.VideoID,
			URL:          WatchURL(it.ID.VideoID, 0),
			Title:        html.UnescapeString(it.Snippet.Title),
			Description:  clip(html.UnescapeString(it.Snippet.Description), descriptionRunes),
			ChannelID:    it.Snippet.ChannelID,
			ChannelTitle: html.UnescapeString(it.Snippet.ChannelTitle),
			PublishedAt:  parseTime(it.Snippet.PublishedAt),
			ThumbnailURL: it.Snippet.Thumbnails.best(),
			Source:       "youtube",
		}
		if v.ChannelID != "" {
			v.ChannelURL = "https://www.youtube.com/channel/" + v.ChannelID
		}
		videos = append(videos, v)
		ids = append(ids, v.ID)
	}
	if len(ids) == 0 {
		return videos, nil
	}
	details, err := c.Details(ctx, ids)
	if err != nil {
		return nil, err
	}
	for i := range videos {
		if d, ok := details[videos[i].ID]; ok {
			mergeDetails(&videos[i], d)
		}
	}
	return videos, nil
}

// Details reads videos.list for ids (at most 50) and returns the videos by
// id. It needs an API key.
func (c *Client) Details(ctx context.Context, ids []string) (map[string]Video, error) {
	if c.key == "" {
		return nil, c.dataAPI.Errorf(nil, nil, "no YouTube Data API key is configured (set YOUTUBE_API_KEY)")
	}
	if len(ids) > MaxResults {
		ids = ids[:MaxResults]
	}
	q := url.Values{}
	q.Set("part", "snippet,contentDetails,statistics")
	q.Set("id", strings.Join(ids, ","))
	q.Set("key", c.key)
	var resp videoListResponse
	if err := c.dataAPI.GetJSON(ctx, c.youtubeBase+"/videos?"+q.Encode(), nil, &resp); err != nil {
		return nil, err
	}
	out := make(map[string]Video, len(resp.Items))
	for _, it := range resp.Items {
		if it.ID == "" {
			continue
		}
		d, _ := ParseISODuration(it.ContentDetails.Duration)
		v := Video{
			ID:           it.ID,
			URL:          WatchURL(it.ID, 0),
			Title:        it.Snippet.Title,
			Description:  clip(it.Snippet.Description, descriptionRunes),
			ChannelID:    it.Snippet.ChannelID,
			ChannelTitle: it.Snippet.ChannelTitle,
			PublishedAt:  parseTime(it.Snippet.PublishedAt),
			Duration:     d,
			Views:        parseCount(it.Statistics.ViewCount),
			Likes:        parseCount(it.Statistics.LikeCount),
			Comments:     parseCount(it.Statistics.CommentCount),
			ThumbnailURL: it.Snippet.Thumbnails.best(),
			Source:       "youtube",
		}
		if d > 0 {
			v.DurationText = Timestamp(d)
		}
		if v.ChannelID != "" {
			v.ChannelURL = "https://www.youtube.com/channel/" + v.ChannelID
		}
		out[it.ID] = v
	}
	return out, nil
}

// mergeDetails fills v from videos.list's answer d, whose description is
// complete where search.list's is cut.
func mergeDetails(v *Video, d Video) {
	if d.Title != "" {
		v.Title = d.Title
	}
	if d.Description != "" {
		v.Description = d.Description
	}
	if d.ThumbnailURL != "" {
		v.ThumbnailURL = d.ThumbnailURL
	}
	v.Duration, v.DurationText = d.Duration, d.DurationText
	v.Views, v.Likes, v.Comments = d.Views, d.Likes, d.Comments
}

var (
	durationRE = regexp.MustCompile(`^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)
	tagRE      = regexp.MustCompile(`<[^>]*>`)
)

// ParseISODuration parses an ISO 8601 duration as videos.list gives it
// ("PT1H2M3S", "P1DT2H", "PT45S", "P0D").
func ParseISODuration(s string) (time.Duration, error) {
	m := durationRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil || s == "P" || strings.HasSuffix(s, "T") {
		return 0, &time.ParseError{Layout: "ISO 8601 duration", Value: s, Message: ": not an ISO 8601 duration"}
	}
	units := []time.Duration{7 * 24 * time.Hour, 24 * time.Hour, time.Hour, time.Minute}
	var d time.Duration
	for i, u := range units {
		if m[i+1] != "" {
			n, err := strconv.Atoi(m[i+1])
			if err != nil {
				return 0, err
			}
			d += time.Duration(n) * u
		}
	}
	if m[5] != "" {
		f, err := strconv.ParseFloat(m[5], 64)
		if err != nil {
			return 0, err
		}
		d += time.Duration(f * float64(time.Second))
	}
	return d, nil
}

// describeDataAPI reads Google's error body
// {"error":{"code":403,"message":"...","errors":[{"reason":"quotaExceeded"}]}}.
func describeDataAPI(status int, body []byte) (string, bool) {
	var e struct {
		Error struct {
			Message string `json:"message"`
			Errors  []struct {
				Reason string `json:"reason"`
			} `json:"errors"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return "", false
	}
	detail := strings.TrimSpace(html.UnescapeString(tagRE.ReplaceAllString(e.Error.Message, "")))
	limited := false
	for _, r := range e.Error.Errors {
		switch r.Reason {
		case "quotaExceeded", "rateLimitExceeded", "userRateLimitExceeded", "dailyLimitExceeded":
			limited = true
		}
		if r.Reason != "" {
			detail += " (" + r.Reason + ")"
		}
	}
	if !limited && (status == 400 || status == 403) && strings.Contains(strings.ToLower(detail), "key") {
		detail += " (check YOUTUBE_API_KEY)"
	}
	return strings.TrimSpace(detail), limited
}

type thumbnails struct {
	Default  thumbnail `json:"default"`
	Medium   thumbnail `json:"medium"`
	High     thumbnail `json:"high"`
	Standard thumbnail `json:"standard"`
	Maxres   thumbnail `json:"maxres"`
}

type thumbnail struct {
	URL    string `json:"url"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
}

// best picks a thumbnail of a useful size: high (480×360), medium,
// standard, default, then maxres.
func (t thumbnails) best() string {
	for _, th := range []thumbnail{t.High, t.Medium, t.Standard, t.Default, t.Maxres} {
		if th.URL != "" {
			return th.URL
		}
	}
	return ""
}

type snippet struct {
	PublishedAt  string     `json:"publishedAt"`
	ChannelID    string     `json:"channelId"`
	Title        string     `json:"title"`
	Description  string     `json:"description"`
	Thumbnails   thumbnails `json:"thumbnails"`
	ChannelTitle string     `json:"channelTitle"`
}

type searchListResponse struct {
	Kind  string `json:"kind"`
	Items []struct {
		ID struct {
			Kind    string `json:"kind"`
			VideoID string `json:"videoId"`
		} `json:"id"`
		Snippet snippet `json:"snippet"`
	} `json:"items"`
}

type videoListResponse struct {
	Items []struct {
		ID             string  `json:"id"`
		Snippet        snippet `json:"snippet"`
		ContentDetails struct {
			Duration string `json:"duration"`
		} `json:"contentDetails"`
		Statistics struct {
			// The Data API sends counts as strings.
			ViewCount    string `json:"viewCount"`
			LikeCount    string `json:"likeCount"`
			CommentCount string `json:"commentCount"`
		} `json:"statistics"`
	} `json:"items"`
}

func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

func parseCount(s string) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}
