package config

import (
	"fmt"
	"time"
)

// Extreme tunes the extreme mode (seed 000 §2): the plan's size, what a
// webSearch keeps and reads, the charts a run keeps and its time limit.
type Extreme struct {
	// MaxActions bounds the plan's todos, and the agent's steps with them.
	MaxActions int `env:"SOVA_EXTREME_MAX_ACTIONS" envDefault:"15"`
	// Results is how many results a webSearch keeps.
	Results int `env:"SOVA_EXTREME_RESULTS" envDefault:"8"`
	// ReadPages is how many of a search's results are read in full when
	// the provider gave little text of them.
	ReadPages int `env:"SOVA_EXTREME_READ_PAGES" envDefault:"8"`
	// ContentChars clips each source's text.
	ContentChars int `env:"SOVA_EXTREME_CONTENT_CHARS" envDefault:"3000"`
	// ChartBytes bounds the charts one run keeps.
	ChartBytes ByteSize `env:"SOVA_EXTREME_CHART_BYTES" envDefault:"32MiB"`
	// Timeout replaces SOVA_RUN_TIMEOUT for extreme runs.
	Timeout time.Duration `env:"SOVA_EXTREME_TIMEOUT" envDefault:"20m"`
}

func (e Extreme) validate() []error {
	var errs []error
	for name, v := range map[string]int{
		"SOVA_EXTREME_MAX_ACTIONS": e.MaxActions, "SOVA_EXTREME_RESULTS": e.Results,
		"SOVA_EXTREME_READ_PAGES": e.ReadPages, "SOVA_EXTREME_CONTENT_CHARS": e.ContentChars,
	} {
		if v < 1 {
			errs = append(errs, fmt.Errorf("%s must be at least 1, got %d", name, v))
		}
	}
	if e.MaxActions > 50 {
		errs = append(errs, fmt.Errorf("SOVA_EXTREME_MAX_ACTIONS must be at most 50 (the seed plans 15), got %d", e.MaxActions))
	}
	if e.ChartBytes < 1<<20 {
		errs = append(errs, fmt.Errorf("SOVA_EXTREME_CHART_BYTES must be at least 1MiB, got %d", e.ChartBytes))
	}
	if e.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("SOVA_EXTREME_TIMEOUT must be positive, got %s", e.Timeout))
	}
	return errs
}
