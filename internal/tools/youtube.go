package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/provider/youtube"
)

// YouTubeSearchName is the youtube group's video search (seed 000 §4.1).
const YouTubeSearchName = youtube.ToolName

// YouTubeOptions tune a youtube_search tool.
type YouTubeOptions struct {
	// Cite numbers the videos as citable sources; nil: not numbered.
	Cite *Citations
	// Language is the person's language: videos relevant to its speakers
	// (with a YouTube key) and transcripts in it first.
	Language string
	// Results is the number of videos (default 10).
	Results int
	// TranscriptChars caps each transcript (default 4000).
	TranscriptChars int
}

// YouTubeSearchArgs are youtube_search's arguments (000 §4.1).
type YouTubeSearchArgs struct {
	Query string `json:"query" jsonschema:"what to look for on YouTube, as a person would type it"`
}

// YouTubeResult is youtube_search's output for the UI: 000 §4.1's
// {videos: [{id, title, channelTitle, publishedAt, description,
// thumbnailUrl, transcript: [{timestamp, text, url}]}]}, each video with
// its citation number and each transcript segment with the link to its
// moment.
type YouTubeResult struct {
	Query  string  `json:"query"`
	Videos []Video `json:"videos"`
}

// Video is a video found, numbered for citation.
type Video struct {
	Number int `json:"number,omitempty"`
	youtube.Video
}

// YouTubeSearch is the youtube_search tool: videos for a query (the
// YouTube Data API with a key, Invidious without) with their transcripts
// in timestamped segments, each linked to its moment of the video. The
// model reads the videos as numbered text with the transcripts' timestamps;
// the UI gets the videos as data.
func YouTubeSearch(run *Run, o YouTubeOptions) agent.Tool {
	if o.Results <= 0 {
		o.Results = youtube.DefaultMaxResults
	}
	if o.TranscriptChars == 0 {
		o.TranscriptChars = 4000
	}
	call := func(ctx context.Context, a YouTubeSearchArgs) (agent.Output, error) {
		if run.p.YouTube == nil {
			return agent.Output{}, errors.New("video search is not available")
		}
		q := strings.Join(strings.Fields(a.Query), " ")
		if q == "" {
			return agent.Output{}, errors.New("the query is empty")
		}
		videos, err := single(ctx, run, q, func(ctx context.Context) ([]youtube.Video, error) {
			return run.p.YouTube.Search(ctx, q, youtube.SearchOptions{
				MaxResults: o.Results, Language: o.Language, TranscriptChars: o.TranscriptChars,
			})
		})
		if err != nil {
			return agent.Output{}, err
		}
		out := YouTubeResult{Query: q, Videos: make([]Video, 0, len(videos))}
		var text strings.Builder
		for _, v := range videos {
			src := sova.Source{URL: v.URL, Title: v.Title, Snippet: clip(v.Description, 300), Kind: sova.SourceWeb}
			if !v.PublishedAt.IsZero() {
				src.Published = v.PublishedAt.Format(time.DateOnly)
			}
			vid := Video{Number: number(o.Cite, src), Video: v}
			out.Videos = append(out.Videos, vid)
			writeVideo(&text, vid)
		}
		if len(videos) == 0 {
			text.WriteString("No videos found for “" + q + "”.")
		}
		o := agent.Output{Text: text.String(), Summary: plural(len(videos), "video", "videos")}
		data, err := jsonOutput(out, "")
		if err != nil {
			return agent.Output{}, err
		}
		o.Data = []byte(data.Text)
		return o, nil
	}
	return agent.NewTool(YouTubeSearchName,
		"Search YouTube videos. Returns numbered videos with channel, date, duration, description and the transcript "+
			"in timestamped segments ([MM:SS] text); a moment of video ID links as https://www.youtube.com/watch?v=ID&t=SECONDSs.",
		call,
		agent.WithTitle(func(a YouTubeSearchArgs) string { return "Searching YouTube for “" + a.Query + "”" }))
}

// writeVideo is a video as the model reads it.
func writeVideo(b *strings.Builder, v Video) {
	if v.Number > 0 {
		fmt.Fprintf(b, "[%d] ", v.Number)
	}
	b.WriteString(v.Title)
	var meta []string
	if v.ChannelTitle != "" {
		meta = append(meta, v.ChannelTitle)
	}
	if !v.PublishedAt.IsZero() {
		meta = append(meta, v.PublishedAt.Format(time.DateOnly))
	}
	if v.DurationText != "" {
		meta = append(meta, v.DurationText)
	}
	if v.Views > 0 {
		meta = append(meta, fmt.Sprintf("%d views", v.Views))
	}
	if len(meta) > 0 {
		b.WriteString(" — " + strings.Join(meta, ", "))
	}
	fmt.Fprintf(b, "\nID: %s\nURL: %s\n", v.ID, v.URL)
	if d := clip(v.Description, 400); d != "" {
		b.WriteString(d + "\n")
	}
	switch {
	case len(v.Transcript) > 0:
		b.WriteString("Transcript:\n")
		for _, s := range v.Transcript {
			fmt.Fprintf(b, "[%s] %s\n", s.Timestamp, s.Text)
		}
		if v.TranscriptTruncated {
			b.WriteString("(transcript cut)\n")
		}
	case v.TranscriptError != "":
		b.WriteString("No transcript.\n")
	}
	b.WriteString("\n")
}
