package tools_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/tools"
)

// TestClosedSetsAreEnums: the closed sets of the data tools are enums in
// their schemas, and stock_chart reads the loose forms models write.
func TestClosedSetsAreEnums(t *testing.T) {
	run := tools.NewRun(tools.Providers{}, nil)
	chart := tools.StockChartTool(run, tools.StockChartOptions{})
	s := chart.Schema()
	if !slices.Contains(s.Properties["range"].Enum, any("1mo")) || !slices.Contains(s.Properties["interval"].Enum, any("1wk")) {
		t.Errorf("stock_chart range %v, interval %v: want enums", s.Properties["range"].Enum, s.Properties["interval"].Enum)
	}
	if e := tools.CoinOHLC(run, tools.CoinOptions{}).Schema().Properties["days"].Enum; !slices.Contains(e, any("max")) {
		t.Errorf("coin_ohlc days %v: want an enum", e)
	}
	// Every closed set of the other tools' arguments.
	for _, c := range []struct {
		tool agent.Tool
		prop string
		want string
	}{
		{tools.GetWeatherData(run, tools.WeatherOptions{}), "units", "imperial"},
		{tools.RedditSearch(run, tools.RedditOptions{}), "timeRange[]", "month"},
		{tools.MultiWebSearch(run, tools.MultiWebSearchOptions{}), "topics[]", "news"},
		{tools.MultiWebSearch(run, tools.MultiWebSearchOptions{}), "quality[]", "best"},
	} {
		p := c.tool.Schema().Properties[strings.TrimSuffix(c.prop, "[]")]
		if p != nil && strings.HasSuffix(c.prop, "[]") {
			p = p.Items
		}
		if p == nil || !slices.Contains(p.Enum, any(c.want)) {
			t.Errorf("%s %s: want an enum holding %q, got %+v", c.tool.Name(), c.prop, c.want, p)
		}
	}
	args := map[string]any{"symbols": []any{"AAPL"}, "range": "aapl month", "interval": "weekly"}
	chart.(agent.ArgFixer).FixArgs(args)
	if args["range"] != "1mo" || args["interval"] != "1wk" {
		t.Errorf("fixed args %v", args)
	}
}
