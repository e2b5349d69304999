package config

import "fmt"

// validateSpaces checks the settings of document spaces and the docs mode.
func (c *Config) validateSpaces() []error {
	var errs []error
	atLeast := func(name string, v, lo int64) {
		if v < lo {
			errs = append(errs, fmt.Errorf("%s must be at least %d, got %d", name, lo, v))
		}
	}
	atLeast("SOVA_SPACES_CHUNK_CHARS", int64(c.SpacesChunkChars), 200)
	atLeast("SOVA_SPACES_CHUNK_OVERLAP", int64(c.SpacesChunkOverlap), 0)
	atLeast("SOVA_SPACES_MAX_FILE_BYTES", c.SpacesMaxFileBytes, 1024)
	atLeast("SOVA_SPACES_MAX_UPLOAD_BYTES", c.SpacesMaxUploadBytes, 1024)
	atLeast("SOVA_SPACES_SEARCH_TOP_K", int64(c.SpacesSearchTopK), 1)
	atLeast("SOVA_DOCS_MAX_DOC_QUERIES", int64(c.DocsMaxDocQueries), 1)
	atLeast("SOVA_DOCS_MAX_WEB_QUERIES", int64(c.DocsMaxWebQueries), 0)
	atLeast("SOVA_DOCS_RESULTS", int64(c.DocsResults), 1)
	atLeast("SOVA_DOCS_MAX_STEPS", int64(c.DocsMaxSteps), 2)
	if c.SpacesChunkOverlap*2 > c.SpacesChunkChars {
		errs = append(errs, fmt.Errorf("SOVA_SPACES_CHUNK_OVERLAP (%d) must be at most half of SOVA_SPACES_CHUNK_CHARS (%d)", c.SpacesChunkOverlap, c.SpacesChunkChars))
	}
	if c.SpacesIdleClose < 0 {
		errs = append(errs, fmt.Errorf("SOVA_SPACES_IDLE_CLOSE must not be negative, got %s", c.SpacesIdleClose))
	}
	if c.DocsTemperature < 0 || c.DocsTemperature > 2 {
		errs = append(errs, fmt.Errorf("SOVA_DOCS_TEMPERATURE must be between 0 and 2, got %g", c.DocsTemperature))
	}
	return errs
}
