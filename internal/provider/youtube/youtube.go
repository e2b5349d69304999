// Package youtube searches YouTube videos and reads their transcripts for
// the youtube_search tool (seed 000 §4.1, DESIGN §8).
//
// With a YouTube Data API key, search is search.list followed by
// videos.list (duration, statistics); without one it is an Invidious
// instance's /api/v1/search. Transcripts always come from Invidious
// (/api/v1/captions/{id}), since the Data API hands caption tracks only to
// the video's owner. Each transcript segment keeps its start time and links
// to that moment of the video.
package youtube

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/sova-ai/sova/internal/apiclient"
)

// Default base URLs, used when a Config field is "".
const (
	DefaultYouTubeURL = "https://www.googleapis.com/youtube/v3"
	// DefaultInvidiousURL is a public instance from the Invidious project's
	// list (docs.invidious.io/instances). Public instances come and go and
	// may limit or close their API; set SOVA_INVIDIOUS_URL to your own.
	DefaultInvidiousURL = "https://inv.nadeko.net"
)

// Defaults of SearchOptions.
const (
	// DefaultMaxResults is the number of videos a search returns (000 §4.1).
	DefaultMaxResults = 10
	// MaxResults is the most videos one search returns (search.list's cap).
	MaxResults = 50
	// DefaultTranscriptChars caps the transcript text kept per video.
	DefaultTranscriptChars = 8000
	// DefaultSegmentWindow is how much of a video one transcript segment
	// covers at most.
	DefaultSegmentWindow = 30 * time.Second
	// DefaultTranscriptTimeout bounds the reading of all transcripts of
	// one search.
	DefaultTranscriptTimeout = 20 * time.Second
	// transcriptConcurrency is how many transcripts are read at once.
	transcriptConcurrency = 4
)

// ErrRateLimited and ErrBadResponse are matched (errors.Is) by the errors of
// a provider that refused for too many requests or an exhausted quota
// (YouTube's quotaExceeded included), and of an answer that could not be
// parsed. ErrNoCaptions is matched when a video has no caption track.
var (
	ErrRateLimited = apiclient.ErrRateLimited
	ErrBadResponse = apiclient.ErrBadResponse
	ErrNoCaptions  = errors.New("the video has no captions")
)

// Config holds the settings of the YouTube providers. The env tags are
// the variables internal/config reads them from (docs/configuration.md).
type Config struct {
	// APIKey is a YouTube Data API v3 key (YOUTUBE_API_KEY); without it
	// search goes through Invidious.
	APIKey string `env:"YOUTUBE_API_KEY"`
	// YouTubeURL is the Data API base (SOVA_YOUTUBE_URL).
	YouTubeURL string `env:"SOVA_YOUTUBE_URL" envDefault:"https://www.googleapis.com/youtube/v3"`
	// InvidiousURL is the Invidious instance (SOVA_INVIDIOUS_URL).
	InvidiousURL string `env:"SOVA_INVIDIOUS_URL" envDefault:"https://inv.nadeko.net"`

	// HTTPClient sends the requests; nil means one with Timeout.
	HTTPClient *http.Client
	// Timeout bounds one provider call, its retry included; 0 means 30s
	// (SOVA_PROVIDER_TIMEOUT).
	Timeout time.Duration `env:"SOVA_PROVIDER_TIMEOUT" envDefault:"30s"`
	// UserAgent is sent with every request; "" means Sova's.
	UserAgent string
	// RetryBackoff is the pause before retrying a 5xx answer or a network
	// failure; 0 means 500ms, negative turns the retry off.
	RetryBackoff time.Duration
}

// Client searches videos and reads transcripts.
type Client struct {
	key          string
	youtubeBase  string
	invidiousURL string
	dataAPI      *apiclient.Client
	invidious    *apiclient.Client
}

// New returns a Client for cfg.
func New(cfg Config) *Client {
	key := strings.TrimSpace(cfg.APIKey)
	opts := func(provider string, describe func(int, []byte) (string, bool)) apiclient.Options {
		return apiclient.Options{
			Provider: provider, HTTPClient: cfg.HTTPClient, Timeout: cfg.Timeout,
			Bases:     []string{cfg.YouTubeURL, cfg.InvidiousURL},
			UserAgent: cfg.UserAgent, RetryBackoff: cfg.RetryBackoff,
			Secrets: []string{key}, Describe: describe,
		}
	}
	return &Client{
		key:          key,
		youtubeBase:  baseURL(cfg.YouTubeURL, DefaultYouTubeURL),
		invidiousURL: baseURL(cfg.InvidiousURL, DefaultInvidiousURL),
		dataAPI:      apiclient.New(opts("youtube", describeDataAPI)),
		invidious:    apiclient.New(opts("invidious", describeInvidious)),
	}
}

// HasKey reports whether searches go through the Data API.
func (c *Client) HasKey() bool { return c.key != "" }

// Video is one search result.
type Video struct {
	ID           string    `json:"id"`
	URL          string    `json:"url"`
	Title        string    `json:"title"`
	Description  string    `json:"description,omitempty"`
	ChannelID    string    `json:"channelId,omitempty"`
	ChannelTitle string    `json:"channelTitle,omitempty"`
	ChannelURL   string    `json:"channelUrl,omitempty"`
	PublishedAt  time.Time `json:"publishedAt,omitzero"`
	// Duration is the video's length; 0 when unknown (or a live stream).
	Duration time.Duration `json:"-"`
	// DurationText is Duration as "M:SS" or "H:MM:SS".
	DurationText string `json:"duration,omitempty"`
	Views        int64  `json:"views,omitempty"`
	Likes        int64  `json:"likes,omitempty"`
	Comments     int64  `json:"comments,omitempty"`
	ThumbnailURL string `json:"thumbnailUrl,omitempty"`
	// Transcript is the video's captions in segments, each linked to its
	// moment; empty when the video has none or they could not be read.
	Transcript          []Segment `json:"transcript,omitempty"`
	TranscriptLanguage  string    `json:"transcriptLanguage,omitempty"`
	TranscriptTruncated bool      `json:"transcriptTruncated,omitempty"`
	// TranscriptError says why there is no transcript, when one was asked
	// for.
	TranscriptError string `json:"transcriptError,omitempty"`
	Source          string `json:"source"` // "youtube" or "invidious"
}

// Segment is a stretch of a transcript.
type Segment struct {
	Start     time.Duration `json:"-"`
	Timestamp string        `json:"timestamp"` // Start as "M:SS" or "H:MM:SS"
	Text      string        `json:"text"`
	URL       string        `json:"url"` // the video at Start
}

// SearchOptions tune Search.
type SearchOptions struct {
	// MaxResults caps the videos; 0 means DefaultMaxResults, at most
	// MaxResults.
	MaxResults int
	// Language (e.g. "ru") asks the Data API for videos relevant to
	// speakers of it, and is the first transcript language tried.
	Language string
	// TranscriptLanguages are tried in order after Language (default
	// "en"); a video with none of them gets its first track.
	TranscriptLanguages []string
	// NoTranscripts skips reading transcripts.
	NoTranscripts bool
	// TranscriptChars caps each transcript's text; 0 means
	// DefaultTranscriptChars, negative means no cap.
	TranscriptChars int
	// SegmentWindow is how much of the video one segment covers at most; 0
	// means DefaultSegmentWindow.
	SegmentWindow time.Duration
	// TranscriptTimeout bounds the reading of all transcripts, so that a
	// slow Invidious instance delays the answer by at most this; 0 means
	// DefaultTranscriptTimeout.
	TranscriptTimeout time.Duration
}

// Search finds videos for query and, unless opts.NoTranscripts, reads their
// transcripts in parallel. A transcript that cannot be read leaves the
// video without one (see Video.TranscriptError); it does not fail Search.
func (c *Client) Search(ctx context.Context, query string, opts SearchOptions) ([]Video, error) {
	query = strings.TrimSpace(query)
	limit := opts.MaxResults
	if limit <= 0 {
		limit = DefaultMaxResults
	}
	limit = min(limit, MaxResults)
	var (
		videos []Video
		err    error
	)
	if c.key != "" {
		if query == "" {
			return nil, c.dataAPI.Errorf(nil, nil, "the query is empty")
		}
		videos, err = c.searchDataAPI(ctx, query, limit, opts.Language)
	} else {
		if query == "" {
			return nil, c.invidious.Errorf(nil, nil, "the query is empty")
		}
		videos, err = c.searchInvidious(ctx, query, limit)
	}
	if err != nil {
		return nil, err
	}
	if !opts.NoTranscripts {
		c.addTranscripts(ctx, videos, opts)
	}
	return videos, nil
}

// addTranscripts fills the transcripts of videos, a few at a time.
func (c *Client) addTranscripts(ctx context.Context, videos []Video, opts SearchOptions) {
	langs := transcriptLanguages(opts)
	maxChars := opts.TranscriptChars
	if maxChars == 0 {
		maxChars = DefaultTranscriptChars
	}
	window := opts.SegmentWindow
	if window <= 0 {
		window = DefaultSegmentWindow
	}
	budget := opts.TranscriptTimeout
	if budget <= 0 {
		budget = DefaultTranscriptTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	var g errgroup.Group
	g.SetLimit(transcriptConcurrency)
	for i := range videos {
		v := &videos[i]
		g.Go(func() error {
			track, cues, err := c.Transcript(ctx, v.ID, langs)
			if err != nil {
				v.TranscriptError = err.Error()
				return nil
			}
			v.TranscriptLanguage = track.LanguageCode
			v.Transcript, v.TranscriptTruncated = Segments(v.ID, cues, window, maxChars)
			return nil
		})
	}
	_ = g.Wait()
}

func transcriptLanguages(opts SearchOptions) []string {
	var langs []string
	add := func(l string) {
		l = strings.TrimSpace(l)
		for _, x := range langs {
			if strings.EqualFold(x, l) {
				return
			}
		}
		if l != "" {
			langs = append(langs, l)
		}
	}
	add(opts.Language)
	for _, l := range opts.TranscriptLanguages {
		add(l)
	}
	if len(opts.TranscriptLanguages) == 0 {
		add("en")
	}
	return langs
}

// WatchURL links to video id, at the moment at when at > 0.
func WatchURL(id string, at time.Duration) string {
	u := "https://www.youtube.com/watch?v=" + id
	if s := int(at / time.Second); s > 0 {
		u += "&t=" + strconv.Itoa(s) + "s"
	}
	return u
}

// Timestamp renders d as "M:SS" (MM:SS in the seed), or "H:MM:SS" from an
// hour on.
func Timestamp(d time.Duration) string {
	s := max(int(d/time.Second), 0)
	h, m, sec := s/3600, s/60%60, s%60
	if h > 0 {
		return strconv.Itoa(h) + ":" + pad2(m) + ":" + pad2(sec)
	}
	return pad2(m) + ":" + pad2(sec)
}

func pad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

var videoIDRE = regexp.MustCompile(`^[A-Za-z0-9_-]{11}$`)

// ValidID reports whether id looks like a YouTube video id.
func ValidID(id string) bool { return videoIDRE.MatchString(id) }

func baseURL(raw, def string) string {
	b := strings.TrimRight(strings.TrimSpace(raw), "/")
	if b == "" {
		return def
	}
	return b
}

// clip shortens s to at most n runes, adding "…" when it cut.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n])) + "…"
}
