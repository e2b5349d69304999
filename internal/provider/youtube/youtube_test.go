package youtube

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/apiclient"
	"github.com/sova-ai/sova/internal/apiclient/apitest"
)

const apiKey = "AIzaSy-TEST-KEY-123"

func testClient(srv *apitest.Server, key string) *Client {
	return New(Config{
		APIKey: key, YouTubeURL: srv.URL + "/youtube/v3/", InvidiousURL: srv.URL + "/",
		HTTPClient: srv.Client(), RetryBackoff: time.Millisecond,
	})
}

type searchCase struct {
	name     string
	route    func(r *http.Request) apitest.Reply
	deadline time.Duration
	want     func(t *testing.T, videos []Video, reqs []apitest.Request)
	wantErr  []string
	wantIs   error
	wantCode int
}

func runSearchCases(t *testing.T, key string, opts SearchOptions, cases []searchCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := apitest.New(t, tc.route)
			c := testClient(srv, key)
			ctx := t.Context()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.deadline)
				defer cancel()
			}
			videos, err := c.Search(ctx, " go concurrency ", opts)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("Search: %v", err)
				}
				if videos == nil {
					t.Error("videos is nil, want a (possibly empty) slice")
				}
				tc.want(t, videos, srv.Requests())
				return
			}
			if err == nil {
				t.Fatalf("Search = %+v, want an error", videos)
			}
			msg := err.Error()
			for _, w := range tc.wantErr {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, apiKey) {
				t.Errorf("error %q leaks the key", msg)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("errors.Is(%v, %v) = false", err, tc.wantIs)
			}
			var ae *apiclient.Error
			if tc.wantCode != 0 && (!errors.As(err, &ae) || ae.Status != tc.wantCode) {
				t.Errorf("status of %v is not %d", err, tc.wantCode)
			}
		})
	}
}

// failureCases are the failures every search path reports the same way.
func failureCases(provider, malformed string) []searchCase {
	return []searchCase{
		{
			name:    "5xx",
			route:   apitest.Always(apitest.Reply{Status: 500, Body: `{"error":"internal"}`}),
			wantErr: []string{provider + ": the service answered", "HTTP 500 Internal Server Error"}, wantCode: 500,
		},
		{
			name:    "429",
			route:   apitest.Always(apitest.Reply{Status: 429, Body: "Too Many Requests", Header: map[string]string{"Retry-After": "30"}}),
			wantErr: []string{"HTTP 429"}, wantIs: ErrRateLimited, wantCode: 429,
		},
		{
			name:     "timeout",
			route:    apitest.Always(apitest.Reply{Delay: 5 * time.Second}),
			deadline: 80 * time.Millisecond,
			wantErr:  []string{provider + ": request stopped", "stopped"}, wantIs: context.DeadlineExceeded,
		},
		{
			name:    "malformed",
			route:   apitest.Always(apitest.Reply{Body: malformed}),
			wantErr: []string{provider + ": the answer is not the expected JSON"}, wantIs: ErrBadResponse,
		},
	}
}

func TestDataAPISearch(t *testing.T) {
	route := func(search, videos apitest.Reply) func(*http.Request) apitest.Reply {
		return func(r *http.Request) apitest.Reply {
			switch r.URL.Path {
			case "/youtube/v3/search":
				return search
			case "/youtube/v3/videos":
				return videos
			}
			return apitest.Reply{Status: 404}
		}
	}
	cases := []searchCase{
		{
			name: "videos",
			route: route(apitest.Reply{Body: apitest.Fixture(t, "search_list.json")},
				apitest.Reply{Body: apitest.Fixture(t, "videos_list.json")}),
			want: func(t *testing.T, videos []Video, reqs []apitest.Request) {
				if len(reqs) != 2 {
					t.Fatalf("requests = %+v", reqs)
				}
				s, v := reqs[0], reqs[1]
				wantSearch := map[string]string{"part": "snippet", "q": "go concurrency", "type": "video", "maxResults": "2", "relevanceLanguage": "ru", "key": apiKey}
				for k, want := range wantSearch {
					if got := s.Query.Get(k); got != want {
						t.Errorf("search.list %s = %q, want %q", k, got, want)
					}
				}
				if v.Path != "/youtube/v3/videos" || v.Query.Get("id") != "f6kdp27TYZs,oV9rvDllKEg" ||
					v.Query.Get("part") != "snippet,contentDetails,statistics" || v.Query.Get("key") != apiKey {
					t.Errorf("videos.list request = %s %v", v.Path, v.Query)
				}
				if len(videos) != 2 {
					t.Fatalf("got %d videos, want 2", len(videos))
				}
				want0 := Video{
					ID: "f6kdp27TYZs", URL: "https://www.youtube.com/watch?v=f6kdp27TYZs",
					Title: "Google I/O 2012 - Go Concurrency Patterns",
					Description: "Rob Pike\n\nConcurrency is the key to designing high performance network services. " +
						"Go's concurrency primitives (goroutines and channels) provide a simple and efficient means of expressing concurrent execution.",
					ChannelID: "UC_x5XG1OV2P6uZZ5FSM9Ttw", ChannelTitle: "Google for Developers",
					ChannelURL:  "https://www.youtube.com/channel/UC_x5XG1OV2P6uZZ5FSM9Ttw",
					PublishedAt: time.Date(2012, 7, 2, 23, 16, 56, 0, time.UTC),
					Duration:    51*time.Minute + 27*time.Second, DurationText: "51:27",
					Views: 1234567, Likes: 15873, Comments: 412,
					ThumbnailURL: "https://i.ytimg.com/vi/f6kdp27TYZs/hqdefault.jpg", Source: "youtube",
				}
				if !reflect.DeepEqual(videos[0], want0) {
					t.Errorf("video 0 =\n%+v\nwant\n%+v", videos[0], want0)
				}
				v1 := videos[1]
				if v1.ID != "oV9rvDllKEg" || v1.Title != "Rob Pike - 'Concurrency Is Not Parallelism'" || v1.Likes != 0 ||
					v1.Views != 812345 || v1.DurationText != "31:22" || v1.ThumbnailURL != "https://i.ytimg.com/vi/oV9rvDllKEg/hqdefault.jpg" {
					t.Errorf("video 1 = %+v", v1)
				}
			},
		},
		{
			name:  "no videos",
			route: route(apitest.Reply{Body: apitest.Fixture(t, "search_list_empty.json")}, apitest.Reply{Status: 500}),
			want: func(t *testing.T, videos []Video, reqs []apitest.Request) {
				if len(videos) != 0 || len(reqs) != 1 {
					t.Errorf("videos = %+v, requests = %d", videos, len(reqs))
				}
			},
		},
		{
			name:    "quota exceeded",
			route:   apitest.Always(apitest.Reply{Status: 403, Body: apitest.Fixture(t, "quota_exceeded.json")}),
			wantErr: []string{"youtube: ", "HTTP 403 Forbidden: The request cannot be completed because you have exceeded your quota. (quotaExceeded)"},
			wantIs:  ErrRateLimited, wantCode: 403,
		},
		{
			name:    "bad key",
			route:   apitest.Always(apitest.Reply{Status: 400, Body: apitest.Fixture(t, "bad_key.json")}),
			wantErr: []string{"API key not valid. Please pass a valid API key. (badRequest) (check YOUTUBE_API_KEY)"}, wantCode: 400,
		},
		{
			name:    "videos.list fails",
			route:   route(apitest.Reply{Body: apitest.Fixture(t, "search_list.json")}, apitest.Reply{Status: 403, Body: apitest.Fixture(t, "quota_exceeded.json")}),
			wantErr: []string{"quotaExceeded"}, wantIs: ErrRateLimited,
		},
	}
	cases = append(cases, failureCases("youtube", `{"kind":"youtube#searchListResponse","items":[{"id":`)...)
	runSearchCases(t, apiKey, SearchOptions{MaxResults: 2, Language: "ru", NoTranscripts: true}, cases)
}

func TestInvidiousSearch(t *testing.T) {
	cases := []searchCase{
		{
			name:  "videos",
			route: apitest.Always(apitest.Reply{Body: apitest.Fixture(t, "invidious_search.json")}),
			want: func(t *testing.T, videos []Video, reqs []apitest.Request) {
				r := reqs[0]
				if r.Path != "/api/v1/search" || r.Query.Get("q") != "go concurrency" || r.Query.Get("type") != "video" || r.Query.Get("key") != "" {
					t.Errorf("request = %s %v", r.Path, r.Query)
				}
				if len(videos) != 2 {
					t.Fatalf("got %d videos, want 2", len(videos))
				}
				want0 := Video{
					ID: "f6kdp27TYZs", URL: "https://www.youtube.com/watch?v=f6kdp27TYZs",
					Title:       "Google I/O 2012 - Go Concurrency Patterns",
					Description: "Rob Pike Concurrency is the key to designing high performance network services.",
					ChannelID:   "UC_x5XG1OV2P6uZZ5FSM9Ttw", ChannelTitle: "Google for Developers",
					ChannelURL:  "https://www.youtube.com/channel/UC_x5XG1OV2P6uZZ5FSM9Ttw",
					PublishedAt: time.Date(2012, 7, 2, 23, 16, 56, 0, time.UTC),
					Duration:    51*time.Minute + 27*time.Second, DurationText: "51:27", Views: 1234567,
					ThumbnailURL: "https://inv.example/vi/f6kdp27TYZs/hqdefault.jpg", Source: "invidious",
				}
				if !reflect.DeepEqual(videos[0], want0) {
					t.Errorf("video 0 =\n%+v\nwant\n%+v", videos[0], want0)
				}
				if v := videos[1]; v.ThumbnailURL != "https://i.ytimg.com/vi/oV9rvDllKEg/hqdefault.jpg" || v.DurationText != "31:22" {
					t.Errorf("video 1 = %+v", v)
				}
			},
		},
		{
			name:  "empty",
			route: apitest.Always(apitest.Reply{Body: "[]"}),
			want: func(t *testing.T, videos []Video, _ []apitest.Request) {
				if len(videos) != 0 {
					t.Errorf("videos = %+v", videos)
				}
			},
		},
		{
			name:    "API disabled",
			route:   apitest.Always(apitest.Reply{Status: 403, Body: `{"error":"Administrator has disabled this endpoint."}`}),
			wantErr: []string{"invidious: ", "HTTP 403 Forbidden: Administrator has disabled this endpoint."}, wantCode: 403,
		},
	}
	cases = append(cases, failureCases("invidious", `[{"type":"video","title":"x`)...)
	runSearchCases(t, "", SearchOptions{NoTranscripts: true}, cases)
}

func TestSearchWithTranscripts(t *testing.T) {
	srv := apitest.New(t, func(r *http.Request) apitest.Reply {
		switch r.URL.Path {
		case "/api/v1/search":
			return apitest.Reply{Body: apitest.Fixture(t, "invidious_search.json")}
		case "/api/v1/captions/f6kdp27TYZs":
			if r.URL.Query().Get("label") == "English" {
				return apitest.Reply{Body: apitest.Fixture(t, "captions_en.vtt"), Header: map[string]string{"Content-Type": "text/vtt; charset=UTF-8"}}
			}
			return apitest.Reply{Body: apitest.Fixture(t, "invidious_captions.json")}
		case "/api/v1/captions/oV9rvDllKEg":
			return apitest.Reply{Body: `{"captions":[]}`}
		}
		return apitest.Reply{Status: 404}
	})
	videos, err := testClient(srv, "").Search(t.Context(), "go concurrency", SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v := videos[0]
	want := []Segment{
		{Start: 0, Timestamp: "00:00", URL: "https://www.youtube.com/watch?v=f6kdp27TYZs",
			Text: "Hello, I'm Rob Pike. Today I'll talk about concurrency patterns in Go. Goroutines are cheap & channels connect them."},
		{Start: 65 * time.Second, Timestamp: "01:05", URL: "https://www.youtube.com/watch?v=f6kdp27TYZs&t=65s",
			Text: "Don't communicate by sharing memory; share memory by communicating."},
	}
	if !reflect.DeepEqual(v.Transcript, want) || v.TranscriptLanguage != "en" || v.TranscriptTruncated || v.TranscriptError != "" {
		t.Errorf("transcript =\n%+v\nwant\n%+v (video %+v)", v.Transcript, want, v)
	}
	if w := videos[1]; w.Transcript != nil || !strings.Contains(w.TranscriptError, "has no captions") {
		t.Errorf("video without captions = %+v", w)
	}
	var sawVTT bool
	for _, r := range srv.Requests() {
		if r.Query.Get("label") == "English" {
			sawVTT = true
			if r.Header.Get("Accept") != "text/vtt" {
				t.Errorf("Accept = %q", r.Header.Get("Accept"))
			}
		}
	}
	if !sawVTT {
		t.Error("the English track was not fetched")
	}
}

func TestTranscriptBudget(t *testing.T) {
	srv := apitest.New(t, func(r *http.Request) apitest.Reply {
		if r.URL.Path == "/api/v1/search" {
			return apitest.Reply{Body: apitest.Fixture(t, "invidious_search.json")}
		}
		return apitest.Reply{Delay: 5 * time.Second}
	})
	start := time.Now()
	videos, err := testClient(srv, "").Search(t.Context(), "go", SearchOptions{TranscriptTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Search took %s despite a 100ms transcript budget", d)
	}
	for _, v := range videos {
		if v.Transcript != nil || !strings.Contains(v.TranscriptError, "invidious: ") {
			t.Errorf("video %s: transcript %v, error %q", v.ID, v.Transcript, v.TranscriptError)
		}
	}
}

func TestTranscriptErrors(t *testing.T) {
	tests := []struct {
		name    string
		route   func(*http.Request) apitest.Reply
		id      string
		wantIs  error
		wantErr string
	}{
		{
			name:    "no captions",
			route:   apitest.Always(apitest.Reply{Body: `{"captions":[]}`}),
			id:      "f6kdp27TYZs",
			wantIs:  ErrNoCaptions,
			wantErr: "invidious: f6kdp27TYZs has no captions",
		},
		{
			name: "track is not WebVTT",
			route: func(r *http.Request) apitest.Reply {
				if r.URL.Query().Get("label") != "" {
					return apitest.Reply{Body: "<html>captcha</html>", Header: map[string]string{"Content-Type": "text/html"}}
				}
				return apitest.Reply{Body: apitest.Fixture(t, "invidious_captions.json")}
			},
			id:      "f6kdp27TYZs",
			wantIs:  ErrBadResponse,
			wantErr: `the "English" captions of f6kdp27TYZs are not WebVTT`,
		},
		{
			name:    "video not found",
			route:   apitest.Always(apitest.Reply{Status: 404, Body: `{"error":"This video is unavailable"}`}),
			id:      "aaaaaaaaaaa",
			wantErr: "HTTP 404 Not Found: This video is unavailable",
		},
		{
			name:    "bad id",
			route:   apitest.Always(apitest.Reply{}),
			id:      "../../etc",
			wantErr: "is not a YouTube video id",
		},
		{
			name:    "malformed list",
			route:   apitest.Always(apitest.Reply{Body: `{"captions":[{"label":`}),
			id:      "f6kdp27TYZs",
			wantIs:  ErrBadResponse,
			wantErr: "not the expected JSON",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := apitest.New(t, tc.route)
			_, _, err := testClient(srv, "").Transcript(t.Context(), tc.id, []string{"en"})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("errors.Is(%v, %v) = false", err, tc.wantIs)
			}
		})
	}
}

func TestParseVTT(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		want    []Cue
		wantErr bool
	}{
		{
			name: "generated captions scroll",
			file: "captions_auto.vtt",
			want: []Cue{
				{Start: 160 * time.Millisecond, End: 2070 * time.Millisecond, Text: "hello everyone welcome"},
				{Start: 2080 * time.Millisecond, End: 4950 * time.Millisecond, Text: "to the talk"},
			},
		},
		{name: "empty file", file: "", want: nil},
		{name: "no header", file: "<html>", wantErr: true},
		{name: "broken times", file: "WEBVTT\n\nab:cd --> xx\nhello\n", wantErr: true},
		{
			name: "hours, CRLF, comma",
			file: "WEBVTT\r\n\r\n01:02:03,500 --> 01:02:05.000\r\n&lt;b&gt; tag&nbsp;text\r\n",
			want: []Cue{{Start: time.Hour + 2*time.Minute + 3500*time.Millisecond, End: time.Hour + 2*time.Minute + 5*time.Second, Text: "<b> tag text"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := tc.file
			if strings.HasSuffix(tc.file, ".vtt") {
				data = apitest.Fixture(t, tc.file)
			} else if tc.name == "empty file" {
				data = "WEBVTT\n"
			}
			got, err := ParseVTT([]byte(data))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("cues =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

func TestSegmentsCap(t *testing.T) {
	cues := []Cue{
		{Start: 0, Text: "aaaa"},
		{Start: 10 * time.Second, Text: "bbbb"},
		{Start: 40 * time.Second, Text: "cccc"},
		{Start: 3700 * time.Second, Text: "dddd"},
	}
	segs, cut := Segments("f6kdp27TYZs", cues, 30*time.Second, -1)
	if len(segs) != 3 || segs[0].Text != "aaaa bbbb" || segs[2].Timestamp != "1:01:40" ||
		segs[2].URL != "https://www.youtube.com/watch?v=f6kdp27TYZs&t=3700s" || cut {
		t.Errorf("segments = %+v, cut %v", segs, cut)
	}
	segs, cut = Segments("f6kdp27TYZs", cues, 30*time.Second, 12)
	if len(segs) != 1 || !cut {
		t.Errorf("capped at 12: %+v, cut %v", segs, cut)
	}
	segs, cut = Segments("f6kdp27TYZs", cues, 30*time.Second, 5)
	if len(segs) != 1 || segs[0].Text != "aaaa…" || !cut {
		t.Errorf("capped at 5: %+v, cut %v", segs, cut)
	}
}

func TestParseISODuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{in: "PT51M27S", want: 51*time.Minute + 27*time.Second},
		{in: "PT1H2M3S", want: time.Hour + 2*time.Minute + 3*time.Second},
		{in: "P1DT2H", want: 26 * time.Hour},
		{in: "P1W", want: 7 * 24 * time.Hour},
		{in: "PT45S", want: 45 * time.Second},
		{in: "PT1.5S", want: 1500 * time.Millisecond},
		{in: "P0D", want: 0},
		{in: "", bad: true},
		{in: "P", bad: true},
		{in: "PT", bad: true},
		{in: "1H", bad: true},
		{in: "PT5X", bad: true},
	}
	for _, tc := range tests {
		got, err := ParseISODuration(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("ParseISODuration(%q) = %v, %v", tc.in, got, err)
		}
	}
}

func TestPickTrack(t *testing.T) {
	auto := CaptionTrack{Label: "English (auto-generated)", LanguageCode: "en", AutoGenerated: true}
	enUS := CaptionTrack{Label: "English (United States)", LanguageCode: "en-US"}
	ru := CaptionTrack{Label: "Russian", LanguageCode: "ru"}
	ruAuto := CaptionTrack{Label: "Russian (auto-generated)", LanguageCode: "ru", AutoGenerated: true}
	tests := []struct {
		tracks []CaptionTrack
		langs  []string
		want   CaptionTrack
		ok     bool
	}{
		{tracks: []CaptionTrack{auto, enUS, ru}, langs: []string{"en"}, want: enUS, ok: true},
		{tracks: []CaptionTrack{auto, ru}, langs: []string{"en"}, want: auto, ok: true},
		{tracks: []CaptionTrack{auto, ruAuto, ru}, langs: []string{"ru", "en"}, want: ru, ok: true},
		{tracks: []CaptionTrack{ruAuto, auto}, langs: []string{"de"}, want: ruAuto, ok: true},
		{tracks: []CaptionTrack{ruAuto, ru}, langs: nil, want: ru, ok: true},
		{tracks: nil, langs: []string{"en"}, ok: false},
	}
	for i, tc := range tests {
		got, ok := PickTrack(tc.tracks, tc.langs)
		if got != tc.want || ok != tc.ok {
			t.Errorf("case %d: PickTrack = %+v, %v; want %+v", i, got, ok, tc.want)
		}
	}
}

func TestTimestampAndURL(t *testing.T) {
	if got := Timestamp(123 * time.Second); got != "02:03" {
		t.Errorf("Timestamp = %q", got)
	}
	if got := Timestamp(3*time.Hour + 4*time.Second); got != "3:00:04" {
		t.Errorf("Timestamp = %q", got)
	}
	if got := WatchURL("f6kdp27TYZs", 123*time.Second+400*time.Millisecond); got != "https://www.youtube.com/watch?v=f6kdp27TYZs&t=123s" {
		t.Errorf("WatchURL = %q", got)
	}
}

func TestEmptyQuery(t *testing.T) {
	for _, key := range []string{"", apiKey} {
		if _, err := New(Config{APIKey: key}).Search(t.Context(), "  ", SearchOptions{}); err == nil {
			t.Errorf("key %q: empty query accepted", key)
		}
	}
}
