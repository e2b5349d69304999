// Package provider is what every provider package under it says of
// itself: the tools it serves and how it serves them now. The packages
// that build the tools' providers (internal/app) list the packages once;
// the tool status (GET /api/providers, sova doctor, a withdrawn tool's
// note) is read from these descriptions.
package provider

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Status says whether a tool can be offered, which provider serves it,
// and which settings enable it or choose its provider (GET /api/providers,
// and the note a run gives when a tool is withdrawn).
type Status struct {
	Name      string `json:"name"`
	Available bool   `json:"available"`
	// Provider names the service that answers now.
	Provider string `json:"provider,omitempty"`
	// Reason says why the tool is withdrawn.
	Reason string `json:"reason,omitempty"`
	// Note says what a setting would change for an available tool.
	Note string `json:"note,omitempty"`
	// Settings are the settings that enable the tool or choose its
	// provider; the first enables a withdrawn tool.
	Settings []string `json:"settings,omitempty"`
}

// Spec is one provider as it is configured: the tools it serves and
// their status.
type Spec struct {
	// Name names the provider package ("weather").
	Name string
	// Tools are the names of the tools it serves.
	Tools []string
	// Status says how it serves one of Tools: Available, Provider, Note,
	// Settings and, for a withdrawn tool, Reason. Lookup fills in the
	// name and a missing reason.
	Status func(tool string) Status
}

// Lookup is a tool's status from the first spec that serves it; ok is
// false for a tool none serves. A withdrawn tool without a reason
// "needs" its first setting.
func Lookup(specs []Spec, tool string) (s Status, ok bool) {
	for _, sp := range specs {
		if !slices.Contains(sp.Tools, tool) {
			continue
		}
		s = sp.Status(tool)
		s.Name = tool
		if !s.Available && s.Reason == "" {
			s.Reason = "not configured"
			if len(s.Settings) > 0 {
				s.Reason = "needs " + s.Settings[0]
			}
		}
		return s, true
	}
	return Status{}, false
}

// Settings is a provider package's settings as the configuration reads
// them from the environment.
type Settings struct {
	// Name names the provider package ("weather").
	Name string
	// Env points at the package's settings struct, whose env tags name
	// the variables and their defaults (docs/configuration.md lists them).
	Env any
	// Check tidies what was read (keys trimmed, addresses without a
	// trailing slash) and reports what a person has to fix, each error
	// naming the variable; nil: nothing to check.
	Check func() []error
}

// Get is the settings of type T in list, as read; ok is false when no
// package there keeps its settings in a T.
func Get[T any](list []Settings) (v T, ok bool) {
	for _, s := range list {
		if p, ok := s.Env.(*T); ok {
			return *p, true
		}
	}
	return v, false
}

// TrimSpace trims each of the settings.
func TrimSpace(settings ...*string) {
	for _, p := range settings {
		*p = strings.TrimSpace(*p)
	}
}

// TrimURL trims each address and drops its trailing slashes.
func TrimURL(urls ...*string) {
	for _, p := range urls {
		*p = strings.TrimRight(strings.TrimSpace(*p), "/")
	}
}

// CheckURL reports a setting that is not an http(s) URL with a host.
func CheckURL(name, value string) error {
	if p, err := url.Parse(value); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return fmt.Errorf("%s=%q is not an http(s) URL", name, value)
	}
	return nil
}

// CheckPositive reports a duration setting that is not positive.
func CheckPositive(name string, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("%s must be positive, got %s", name, d)
	}
	return nil
}

// Errors are the errors among errs that are not nil.
func Errors(errs ...error) []error {
	var out []error
	for _, err := range errs {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}
