package config

import (
	"strings"
	"testing"
	"time"
)

func TestSpacesDefaults(t *testing.T) {
	cfg, err := FromEnv(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SpacesChunkChars != 1200 || cfg.SpacesChunkOverlap != 150 || cfg.SpacesMaxFileBytes != 50<<20 ||
		cfg.SpacesMaxUploadBytes != 100<<20 || cfg.SpacesIdleClose != time.Minute || cfg.SpacesSearchTopK != 5 ||
		cfg.UserName != "" || cfg.DocsMaxDocQueries != 5 || cfg.DocsMaxWebQueries != 3 || cfg.DocsWebSearch ||
		cfg.DocsResults != 8 || cfg.DocsMaxSteps != 10 || cfg.DocsTemperature != 0.6 {
		t.Errorf("defaults: %+v", cfg)
	}
}

func TestSpacesValidation(t *testing.T) {
	tests := []struct {
		vars map[string]string
		want string // in the error; "" for none
	}{
		{map[string]string{"SOVA_USER_NAME": "Анна", "SOVA_DOCS_WEB_SEARCH": "true", "SOVA_DOCS_MAX_WEB_QUERIES": "0"}, ""},
		{map[string]string{"SOVA_SPACES_CHUNK_CHARS": "100"}, "SOVA_SPACES_CHUNK_CHARS must be at least 200"},
		{map[string]string{"SOVA_SPACES_CHUNK_CHARS": "400", "SOVA_SPACES_CHUNK_OVERLAP": "300"}, "at most half"},
		{map[string]string{"SOVA_SPACES_MAX_FILE_BYTES": "10"}, "SOVA_SPACES_MAX_FILE_BYTES must be at least 1024"},
		{map[string]string{"SOVA_DOCS_MAX_DOC_QUERIES": "0"}, "SOVA_DOCS_MAX_DOC_QUERIES must be at least 1"},
		{map[string]string{"SOVA_DOCS_MAX_STEPS": "1"}, "SOVA_DOCS_MAX_STEPS must be at least 2"},
		{map[string]string{"SOVA_DOCS_TEMPERATURE": "3"}, "SOVA_DOCS_TEMPERATURE must be between 0 and 2"},
		{map[string]string{"SOVA_SPACES_IDLE_CLOSE": "-1s"}, "SOVA_SPACES_IDLE_CLOSE must not be negative"},
		{map[string]string{"SOVA_DOCS_WEB_SEARCH": "maybe"}, "SOVA_DOCS_WEB_SEARCH"},
	}
	for _, tc := range tests {
		_, err := FromEnv(tc.vars)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.vars, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: err = %v, want %q", tc.vars, err, tc.want)
		}
	}
}
