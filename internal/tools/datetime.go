package tools

import (
	"context"
	"time"

	"github.com/sova-ai/sova/internal/agent"
)

// DatetimeName is the clock tool every group has (seed 000 §1.2).
const DatetimeName = "datetime"

// DatetimeOptions tune a datetime tool.
type DatetimeOptions struct {
	// Timezone is the person's IANA time zone; "" or unknown: UTC.
	Timezone string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// DatetimeArgs are datetime's arguments: none.
type DatetimeArgs struct{}

// DatetimeResult is datetime's output.
type DatetimeResult struct {
	// Timestamp is the moment in RFC 3339 with the zone's offset.
	Timestamp string `json:"timestamp"`
	Date      string `json:"date"`     // "Monday, 2 January 2006"
	Time      string `json:"time"`     // "15:04"
	Timezone  string `json:"timezone"` // the IANA name used
	Unix      int64  `json:"unix"`
}

// Datetime is the datetime tool: the current date and time in the
// person's time zone.
func Datetime(o DatetimeOptions) agent.Tool {
	if o.Now == nil {
		o.Now = time.Now
	}
	call := func(context.Context, DatetimeArgs) (agent.Output, error) {
		now := o.Now()
		tz := "UTC"
		if loc, err := time.LoadLocation(o.Timezone); o.Timezone != "" && err == nil {
			now, tz = now.In(loc), o.Timezone
		} else {
			now = now.UTC()
		}
		r := DatetimeResult{Timestamp: now.Format(time.RFC3339), Date: now.Format("Monday, 2 January 2006"),
			Time: now.Format("15:04"), Timezone: tz, Unix: now.Unix()}
		return jsonOutput(r, r.Date+", "+r.Time+" ("+tz+")")
	}
	return agent.NewTool(DatetimeName, "Get the current date and time in the person's time zone.", call,
		agent.WithTitle(func(DatetimeArgs) string { return "Checking the date and time" }))
}
