package app

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/lang"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/sovatest"
	"github.com/sova-ai/sova/internal/spaces"
)

var markerRE = regexp.MustCompile(`\[\d+\]`)

// TestEveryModeHoldsWithAMisbehavingModel runs every citing mode (search,
// deep_search, every search group that cites, extreme, deep_research,
// sgr_agent and docs over a document space) against a model that
// misbehaves in a third of its replies (tool calls written as text, broken
// and sloppy arguments, json_schema refused, JSON among prose): at least
// 95% of the runs end with an answer citing pages that were read, the rest
// with the note that nothing was read, and none cites nothing.
func TestEveryModeHoldsWithAMisbehavingModel(t *testing.T) {
	arts := sovatest.DefaultArticles()
	site := sovatest.NewSite(t, arts)
	sx := sovatest.NewSearXNG(t, site, arts)
	prov := sovatest.NewProviders(t)
	model := sovatest.NewModel(t)
	model.Misbehave = 3
	vars := sovatest.Env(model, sx, t.TempDir())
	for k, v := range sovatest.ProviderEnv(prov) {
		vars[k] = v
	}
	vars["XAI_API_KEY"] = "xai-test-key" // the x group searches X
	vars["SOVA_DOCS_WEB_SEARCH"] = "false"
	a, err := New(t.Context(), mustConfig(t, vars), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(context.Background()) })
	const user = "local"
	sp, err := a.Spaces.CreateSpace(t.Context(), user, "Economy", "notes on the economy of the 1930s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Spaces.Add(t.Context(), user, sp.ID, []spaces.File{
		spaces.BytesFile("banks.md", []byte("# Banks\n\nRoosevelt said in 1933 that sound banks would reopen after the bank holiday.\n")),
		spaces.BytesFile("growth.md", []byte("# Growth\n\nGDP growth was low in the 1930s, high in the 1940s; the New Deal and the end of the gold standard helped recovery, farm prices fell in the Dust Bowl years.\n")),
	}, spaces.AddOptions{}); err != nil {
		t.Fatal(err)
	}

	questions := []string{
		"How did presidents describe the economy in the 1930s?",
		"What did Roosevelt say about banks in 1933?",
		"Compare GDP growth decade by decade since the 1930s",
		"Why did the United States leave the gold standard?",
		"What happened to farm prices in the Dust Bowl years?",
		"What was the New Deal?",
	}
	modes := []string{"search", "deep_search", "web", "academic", "youtube", "reddit", "code", "x", "stocks", "crypto",
		"extreme", "deep_research", "sgr_agent", "docs"}
	notes := map[string]bool{}
	for _, l := range []lang.Language{lang.English, lang.Russian} {
		notes[mode.UnverifiedNote(l, true)], notes[mode.UnverifiedNote(l, false)] = true, true
	}
	runs, cited, noted := 0, 0, 0
	perMode := map[string]*[2]int{}
	for _, id := range modes {
		perMode[id] = &[2]int{}
	}
	for _, id := range modes {
		m, ok := a.Service.Modes().Get(id)
		if !ok {
			t.Fatalf("mode %s is not registered", id)
		}
		for _, q := range questions {
			runs++
			before := siteHits(site, arts)
			ctx, cancel := context.WithTimeout(sova.WithUser(context.Background(), sova.User{ID: user}), time.Minute)
			var rec eventtest.Recorder
			res, err := m.Run(ctx, mode.Input{UserID: user, Question: q, RunID: fmt.Sprintf("r-%s-%d", id, runs), Now: time.Now()}, &rec)
			cancel()
			if err != nil {
				t.Errorf("%s %q: %v", id, q, err)
				continue
			}
			isNoted := false
			for n := range notes {
				isNoted = isNoted || strings.HasPrefix(res.Text, n)
			}
			if strings.Contains(res.Text, "<tool_call>") || strings.Contains(res.Text, "[TOOL_CALLS]") || strings.Contains(res.Text, `"arguments"`) {
				t.Errorf("%s %q: a tool call shows in the answer: %q", id, q, res.Text)
			}
			if isNoted {
				noted++
				perMode[id][1]++
				continue
			}
			// Every source cited is a page of the site this run read, a
			// result marked as known from its snippet only, or a data
			// provider's page a tool fetched.
			if why := citesWhatWasRead(res, site, before); why != "" {
				t.Errorf("%s %q %s and says nothing of it: %q", id, q, why, res.Text)
				continue
			}
			cited++
			perMode[id][0]++
		}
	}
	mis := model.Misbehaved()
	t.Logf("%d runs: %d cite pages read, %d say nothing was read; misbehaved replies %v", runs, cited, noted, mis)
	for _, id := range modes {
		t.Logf("%-14s %d cited, %d noted of %d", id, perMode[id][0], perMode[id][1], len(questions))
	}
	if cited*100 < runs*95-noted*100 || cited+noted != runs {
		t.Errorf("%d of %d runs cite pages read, %d are noted", cited, runs, noted)
	}
	if cited*100 < runs*95 {
		t.Errorf("only %d of %d runs cite pages read", cited, runs)
	}
	for _, kind := range []string{sovatest.MisTextCalls, sovatest.MisBrokenArgs, sovatest.MisSloppyArgs, sovatest.MisNoJSONSchema} {
		if mis[kind] == 0 {
			t.Errorf("the model never misbehaved with %s: %v", kind, mis)
		}
	}
}
