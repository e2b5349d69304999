package sova

import (
	"context"
	"time"
)

// Kinds of connector.
const (
	ConnectorFolder = "folder" // a folder on the server's file system
	ConnectorWebDAV = "webdav" // a WebDAV share (Nextcloud, ownCloud, …)
)

// Connector keeps a space in sync with a source: the files of a folder
// or a WebDAV share become the space's documents. Password is the share's
// secret: stored, never returned by the API, never logged.
type Connector struct {
	ID       string `json:"id"`
	UserID   string `json:"-"`
	SpaceID  string `json:"spaceId"`
	Kind     string `json:"kind"`
	Location string `json:"location"` // the folder's path or the share's URL
	Username string `json:"username,omitempty"`
	Password string `json:"-"`
	// HasPassword tells clients a secret is set without showing it.
	HasPassword bool      `json:"hasPassword"`
	CreatedAt   time.Time `json:"createdAt"`
	// The last sync: when it ended, what it did, and its error ("" when
	// it succeeded).
	LastSyncAt time.Time  `json:"lastSyncAt,omitzero"`
	LastResult SyncResult `json:"lastResult"`
	LastError  string     `json:"lastError,omitempty"`
}

// SyncResult counts what one sync did to a connected space.
type SyncResult struct {
	Added     int `json:"added"`
	Updated   int `json:"updated"`
	Removed   int `json:"removed"`
	Unchanged int `json:"unchanged"`
	Failed    int `json:"failed"`
	// Errors names the files that failed and why (a few at most).
	Errors []string `json:"errors,omitempty"`
}

// SyncedFile is what a connector last saw of one file of its source: the
// ETag (WebDAV) or the modification time and size, by which a change is
// noticed without reading the file.
type SyncedFile struct {
	Path    string
	ETag    string
	Size    int64
	ModTime time.Time
}

// ConnectorStore keeps connectors and the files they synced. One space
// has at most one connector. Every method taking a user is scoped by it:
// another user's connector is ErrNotFound.
type ConnectorStore interface {
	// PutConnector connects a space (one of the user's), replacing the
	// space's connector if it has one; ID and CreatedAt are filled in.
	PutConnector(ctx context.Context, c *Connector) error
	// GetConnector returns the connector of one of the user's spaces.
	GetConnector(ctx context.Context, userID, spaceID string) (*Connector, error)
	// ListConnectors returns the user's connectors; never nil.
	ListConnectors(ctx context.Context, userID string) ([]Connector, error)
	// DeleteConnector disconnects a space; its documents stay.
	DeleteConnector(ctx context.Context, userID, spaceID string) error
	// DueConnectors returns every user's connectors whose last sync
	// ended before the given time (or never happened), oldest first: the
	// background sync's work list.
	DueConnectors(ctx context.Context, before time.Time, limit int) ([]Connector, error)
	// SetConnectorSynced records the end of a sync.
	SetConnectorSynced(ctx context.Context, connectorID string, at time.Time, res SyncResult, syncErr string) error
	// SyncedFiles returns what the connector last saw of its files; never nil.
	SyncedFiles(ctx context.Context, connectorID string) ([]SyncedFile, error)
	// PutSyncedFiles records files as seen and forgets the removed paths.
	PutSyncedFiles(ctx context.Context, connectorID string, put []SyncedFile, removed []string) error
}
