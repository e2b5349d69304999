package doctor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/llm"
)

// Names of the model checks.
const (
	CheckEndpoint  = "model endpoint"
	CheckKey       = "API key"
	CheckModel     = "main model"
	CheckFastModel = "fast model"
	CheckFallback  = "fallback model"
)

const keyFix = "set SOVA_LLM_API_KEY or OPENAI_API_KEY"

// Model checks the model endpoint with one GET {base}/models: that it
// answers, that it accepts the key, and that it serves the main, fast and
// (when set) fallback models.
func Model(ctx context.Context, cfg *config.Config, opts Options) []Check {
	base := redactURL(cfg.LLMBaseURL)
	endpoint := Check{Name: CheckEndpoint, Required: true}
	key := Check{Name: CheckKey, Required: true}
	models := []Check{
		{Name: CheckModel, Required: true},
		{Name: CheckFastModel, Required: true},
	}
	if cfg.FallbackModel != "" {
		models = append(models, Check{Name: CheckFallback})
	}
	skip := func(why string) []Check {
		key.Status, key.Detail = Skip, "not checked: "+why
		for i := range models {
			models[i].Status, models[i].Detail = Skip, "not checked: "+why
		}
		return append([]Check{endpoint, key}, models...)
	}

	client, err := llm.New(llm.Config{
		BaseURL: cfg.LLMBaseURL, APIKey: cfg.LLMAPIKey, Model: cfg.Model, FastModel: cfg.FastModel,
		Timeout: opts.timeout(), MaxRetries: -1, HTTPClient: opts.HTTPClient,
	})
	if err != nil {
		endpoint.Status, endpoint.Detail = Fail, strings.TrimPrefix(err.Error(), "llm: ")
		endpoint.Fix = "set SOVA_LLM_BASE_URL (for example https://api.openai.com/v1 or http://localhost:11434/v1) and SOVA_MODEL"
		return skip("the endpoint is not configured")
	}
	ids, err := client.ListModels(ctx)
	var ae *llm.APIError
	switch {
	case err == nil:
	case errors.As(err, &ae) && (ae.StatusCode == http.StatusUnauthorized || ae.StatusCode == http.StatusForbidden):
		endpoint.Status, endpoint.Detail = OK, base+" answers"
		key.Status, key.Fix = Fail, keyFix
		if cfg.LLMAPIKey == "" && strings.TrimRight(cfg.LLMBaseURL, "/") == config.DefaultOpenAIURL {
			// The first run: nothing configured, so OpenAI without a key.
			key.Fix = "set OPENAI_API_KEY, or SOVA_LLM_BASE_URL to another endpoint (Ollama: http://localhost:11434/v1)"
		}
		if cfg.LLMAPIKey == "" {
			key.Detail = fmt.Sprintf("no key is set and the endpoint asks for one (%d %s)", ae.StatusCode, http.StatusText(ae.StatusCode))
		} else {
			key.Detail = fmt.Sprintf("the endpoint refused the key (%d %s)", ae.StatusCode, http.StatusText(ae.StatusCode))
			if ae.Message != "" {
				key.Detail += ": " + ae.Message
			}
		}
		for i := range models {
			models[i].Status, models[i].Detail = Skip, "not checked: the key was refused"
		}
		return append([]Check{endpoint, key}, models...)
	case errors.As(err, &ae) && ae.StatusCode == http.StatusNotFound:
		endpoint.Status = Fail
		endpoint.Detail = fmt.Sprintf("GET %s/models answered 404 Not Found: this is not the base URL of an OpenAI-compatible API", strings.TrimRight(base, "/"))
		endpoint.Fix = "check SOVA_LLM_BASE_URL: it usually ends in /v1"
		return skip("the endpoint did not answer")
	default:
		endpoint.Status = Fail
		endpoint.Detail, endpoint.Fix = splitFix(err.Error())
		// The error names no address (its text is for clients); the
		// operator's report does.
		d := strings.TrimPrefix(endpoint.Detail, "the ")
		switch {
		case strings.HasPrefix(d, "model endpoint "):
			d = base + " " + strings.TrimPrefix(d, "model endpoint ")
		case strings.HasPrefix(d, "cannot reach the model endpoint: "):
			d = base + " cannot be reached: " + strings.TrimPrefix(d, "cannot reach the model endpoint: ")
		default:
			d = base + ": " + d
		}
		endpoint.Detail = d
		if endpoint.Fix == "" {
			endpoint.Fix = "check SOVA_LLM_BASE_URL and that the model server is running"
		}
		return skip("the endpoint did not answer")
	}

	endpoint.Status = OK
	endpoint.Detail = fmt.Sprintf("%s answers (%d models)", base, len(ids))
	key.Status = OK
	if cfg.LLMAPIKey == "" {
		key.Detail = "none set, and the endpoint needs none"
	} else {
		key.Detail = "accepted"
	}
	vars := []string{"SOVA_MODEL", "SOVA_FAST_MODEL", "SOVA_FALLBACK_MODEL"}
	names := []string{cfg.Model, cfg.FastModel, cfg.FallbackModel}
	for i := range models {
		models[i] = modelServed(models[i], names[i], vars[i], ids)
	}
	if cfg.FastModel == cfg.Model {
		// One model for both: its line says it all.
		models[1].Detail, models[1].Fix = "same as the main model", ""
		if models[0].Status != OK {
			models[1].Status, models[1].Detail = Skip, "not checked: same as the main model"
		}
	}
	return append([]Check{endpoint, key}, models...)
}

// modelServed checks that name is among the ids the endpoint lists.
func modelServed(c Check, name, envVar string, ids []string) Check {
	if len(ids) == 0 {
		// Some proxies list nothing and route any name.
		c.Status, c.Detail = Skip, fmt.Sprintf("%s: not checked, the endpoint lists no models", name)
		return c
	}
	if slices.ContainsFunc(ids, func(id string) bool { return sameModel(id, name) }) {
		c.Status, c.Detail = OK, name+" is served"
		return c
	}
	c.Status = Fail
	c.Detail = fmt.Sprintf("%s is not among the %d models the endpoint lists", name, len(ids))
	c.Fix = fmt.Sprintf("set %s to one of: %s", envVar, listSome(ids, 8))
	return c
}

// sameModel reports whether the listed id names the configured model:
// exactly, or as Ollama's "name:latest" or Gemini's "models/name".
func sameModel(id, name string) bool {
	return id == name || id == name+":latest" || id == "models/"+name
}

func listSome(ids []string, n int) string {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	if len(ids) <= n {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s (and %d more)", strings.Join(ids[:n], ", "), len(ids)-n)
}

// redactURL drops credentials and query from a URL shown in a report.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// splitFix splits an error message of package llm, "problem — fix", in two.
func splitFix(msg string) (problem, fix string) {
	if i := strings.LastIndex(msg, " — "); i > 0 {
		return msg[:i], msg[i+len(" — "):]
	}
	return msg, ""
}
