package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"
)

// Memory are the settings of memories (the memory group, /api/memories).
type Memory struct {
	// SupermemoryAPIKey keeps memories in Supermemory instead of the store.
	SupermemoryAPIKey string `env:"SUPERMEMORY_API_KEY"`
	SupermemoryURL    string `env:"SOVA_SUPERMEMORY_URL" envDefault:"https://api.supermemory.ai"`
	// MaxPerUser bounds one person's built-in memories.
	MaxPerUser int `env:"SOVA_MEMORY_MAX_PER_USER" envDefault:"5000"`
}

// Connectors are the settings of connected sources (a space kept in sync
// with a folder or a WebDAV share).
type Connectors struct {
	// SyncInterval is how often each connected space is synced; 0 turns
	// the background sync off (a sync then runs only when asked for).
	SyncInterval time.Duration `env:"SOVA_CONNECTORS_SYNC_INTERVAL" envDefault:"15m"`
	// FolderRoots are the folders of the server under which admins may
	// connect a folder; empty: any folder the server can read.
	FolderRoots []string `env:"SOVA_CONNECTORS_FOLDER_ROOTS" envSeparator:","`
	// AllowPrivateHosts lets WebDAV shares on loopback, private and
	// link-local addresses be connected (a Nextcloud on the LAN); off,
	// such addresses are refused at dial time.
	AllowPrivateHosts bool `env:"SOVA_CONNECTORS_ALLOW_PRIVATE" envDefault:"false"`
	// MaxFiles bounds the files of one source.
	MaxFiles int `env:"SOVA_CONNECTORS_MAX_FILES" envDefault:"5000"`
	// Timeout bounds one sync.
	Timeout time.Duration `env:"SOVA_CONNECTORS_TIMEOUT" envDefault:"30m"`
}

func (c *Config) normalizeMemory() {
	c.Memory.SupermemoryAPIKey = strings.TrimSpace(c.Memory.SupermemoryAPIKey)
	c.Memory.SupermemoryURL = strings.TrimRight(strings.TrimSpace(c.Memory.SupermemoryURL), "/")
	c.Connectors.FolderRoots = trimAll(c.Connectors.FolderRoots)
}

func (c *Config) validateMemory() []error {
	var errs []error
	if p, err := url.Parse(c.Memory.SupermemoryURL); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		errs = append(errs, fmt.Errorf("SOVA_SUPERMEMORY_URL=%q is not an http(s) URL", c.Memory.SupermemoryURL))
	}
	if c.Memory.MaxPerUser < 1 {
		errs = append(errs, fmt.Errorf("SOVA_MEMORY_MAX_PER_USER must be at least 1, got %d", c.Memory.MaxPerUser))
	}
	if c.Connectors.SyncInterval < 0 || (c.Connectors.SyncInterval > 0 && c.Connectors.SyncInterval < time.Minute) {
		errs = append(errs, fmt.Errorf("SOVA_CONNECTORS_SYNC_INTERVAL must be 0 (off) or at least 1m, got %s", c.Connectors.SyncInterval))
	}
	if c.Connectors.MaxFiles < 1 {
		errs = append(errs, fmt.Errorf("SOVA_CONNECTORS_MAX_FILES must be at least 1, got %d", c.Connectors.MaxFiles))
	}
	if c.Connectors.Timeout < time.Second {
		errs = append(errs, fmt.Errorf("SOVA_CONNECTORS_TIMEOUT must be at least 1s, got %s", c.Connectors.Timeout))
	}
	for _, r := range c.Connectors.FolderRoots {
		if !filepath.IsAbs(r) {
			errs = append(errs, fmt.Errorf("SOVA_CONNECTORS_FOLDER_ROOTS: %q is not an absolute path", r))
		}
	}
	return errs
}
