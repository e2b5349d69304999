// Package deploy holds the container deployment (compose.yaml); its test
// checks the file's promises that docker compose cannot check offline.
package deploy

import (
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

type compose struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Environment map[string]string `yaml:"environment"`
		Ports       []string          `yaml:"ports"`
		DependsOn   map[string]struct {
			Condition string `yaml:"condition"`
		} `yaml:"depends_on"`
		Healthcheck struct {
			Test []string `yaml:"test"`
		} `yaml:"healthcheck"`
	} `yaml:"services"`
}

func TestComposeNodesShareOneDatabase(t *testing.T) {
	b, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c compose
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	nodes := []string{"sova-1", "sova-2"}
	for _, dep := range []string{"postgres", "redis", "searxng"} {
		if _, ok := c.Services[dep]; !ok {
			t.Errorf("no %s service", dep)
		}
	}
	ids, ports := map[string]bool{}, map[string]bool{}
	var db, redis string
	for _, name := range nodes {
		s, ok := c.Services[name]
		if !ok {
			t.Fatalf("no %s service", name)
		}
		env := s.Environment
		if env["SOVA_DATABASE_URL"] == "" || !strings.HasPrefix(env["SOVA_DATABASE_URL"], "postgres://") {
			t.Errorf("%s: SOVA_DATABASE_URL = %q, want a PostgreSQL URL", name, env["SOVA_DATABASE_URL"])
		}
		if db == "" {
			db, redis = env["SOVA_DATABASE_URL"], env["SOVA_REDIS_URL"]
		} else if env["SOVA_DATABASE_URL"] != db || env["SOVA_REDIS_URL"] != redis {
			t.Errorf("%s: database %q and Redis %q, want the other node's %q and %q", name, env["SOVA_DATABASE_URL"], env["SOVA_REDIS_URL"], db, redis)
		}
		id := env["SOVA_NODE_ID"]
		if id == "" || ids[id] {
			t.Errorf("%s: SOVA_NODE_ID %q is empty or another node's", name, id)
		}
		ids[id] = true
		if env["SOVA_SEARXNG_URL"] == "" {
			t.Errorf("%s: no SOVA_SEARXNG_URL", name)
		}
		if len(s.Ports) != 1 || ports[s.Ports[0]] {
			t.Errorf("%s: ports %v, want one of its own", name, s.Ports)
		} else {
			ports[s.Ports[0]] = true
		}
		for _, dep := range []string{"postgres", "redis", "searxng"} {
			if s.DependsOn[dep].Condition != "service_healthy" {
				t.Errorf("%s: depends on %s with condition %q, want service_healthy", name, dep, s.DependsOn[dep].Condition)
			}
		}
	}
	for name, s := range c.Services {
		if len(s.Healthcheck.Test) == 0 {
			t.Errorf("%s: no health check", name)
		}
	}
}

func TestSearXNGAnswersJSON(t *testing.T) {
	b, err := os.ReadFile("searxng/settings.yml")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Search struct {
			Formats []string `yaml:"formats"`
		} `yaml:"search"`
	}
	if err := yaml.Unmarshal(b, &s); err != nil {
		t.Fatalf("searxng/settings.yml: %v", err)
	}
	for _, f := range s.Search.Formats {
		if f == "json" {
			return
		}
	}
	t.Errorf("search.formats = %v: SearXNG must allow json for Sova", s.Search.Formats)
}
