// Package all names the provider packages this build has: their settings
// are read with the configuration from this list.
package all

import (
	"github.com/sova-ai/sova/internal/provider"
	"github.com/sova-ai/sova/internal/provider/academic"
	"github.com/sova-ai/sova/internal/provider/coins"
	"github.com/sova-ai/sova/internal/provider/flights"
	"github.com/sova-ai/sova/internal/provider/markets"
	"github.com/sova-ai/sova/internal/provider/movies"
	"github.com/sova-ai/sova/internal/provider/places"
	"github.com/sova-ai/sova/internal/provider/reddit"
	"github.com/sova-ai/sova/internal/provider/weather"
	"github.com/sova-ai/sova/internal/provider/xai"
	"github.com/sova-ai/sova/internal/provider/youtube"
)

// Settings are fresh, unread settings of every provider package, one
// line each.
func Settings() []provider.Settings {
	return []provider.Settings{
		academic.Settings(),
		youtube.Settings(),
		reddit.Settings(),
		xai.Settings(),
		weather.Settings(),
		places.Settings(),
		markets.Settings(),
		coins.Settings(),
		flights.Settings(),
		movies.Settings(),
	}
}
