package tools_test

import (
	"slices"
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
	args := map[string]any{"symbols": []any{"AAPL"}, "range": "aapl month", "interval": "weekly"}
	chart.(agent.ArgFixer).FixArgs(args)
	if args["range"] != "1mo" || args["interval"] != "1wk" {
		t.Errorf("fixed args %v", args)
	}
}
