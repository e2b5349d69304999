// Package connectors keeps document spaces in sync with a source: a
// folder of the server or a WebDAV share (Nextcloud, ownCloud). A sync
// lists the source, reads the files that are new or changed since the
// last sync (by ETag, or by modification time and size), adds them to the
// space, and removes the documents whose files are gone; documents
// uploaded to the space by hand are left alone. Syncs run periodically
// under the Service, which the app stops on shutdown, and on request.
//
// A share's password is stored with its connector and used only to reach
// the share: the API never returns it and nothing logs it.
package connectors

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/spaces"
)

// Spaces is what a sync changes: *spaces.Service.
type Spaces interface {
	Add(ctx context.Context, userID, spaceID string, files []spaces.File, opt spaces.AddOptions) ([]spaces.FileResult, error)
	Documents(ctx context.Context, userID, spaceID string) ([]sova.Document, error)
	DeleteDocuments(ctx context.Context, userID, spaceID string, docIDs []string) error
}

// Config tunes the Service.
type Config struct {
	// Interval is how often each connector is synced; 0: only on request.
	Interval time.Duration
	// FolderRoots are the folders under which a folder may be connected;
	// empty: any folder the server can read. Connecting a folder is for
	// admins in any case.
	FolderRoots []string
	// AllowPrivate lets WebDAV shares on loopback and private addresses
	// be connected.
	AllowPrivate bool
	// MaxFiles bounds the files of one source (default 5000).
	MaxFiles int
	// Timeout bounds one sync (default 30m).
	Timeout time.Duration
	// Transport replaces the guarded transport of WebDAV requests (tests).
	Transport http.RoundTripper
	Logger    *slog.Logger
}

// Service connects spaces to sources and syncs them.
type Service struct {
	store  sova.ConnectorStore
	spaces Spaces
	cfg    Config
	log    *slog.Logger

	mu      sync.Mutex
	syncing map[string]chan struct{} // connector id → closed when its sync ends
	stop    context.CancelFunc
	done    chan struct{}
}

// ErrForbidden is returned when a person may not connect a source.
var ErrForbidden = errors.New("forbidden")

// New returns a Service.
func New(st sova.ConnectorStore, sp Spaces, cfg Config) *Service {
	if cfg.MaxFiles <= 0 {
		cfg.MaxFiles = 5000
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Transport == nil {
		cfg.Transport = GuardedTransport(cfg.AllowPrivate)
	}
	return &Service{store: st, spaces: sp, cfg: cfg, log: cfg.Logger, syncing: map[string]chan struct{}{}}
}

// Request is what a person asks to connect.
type Request struct {
	Kind     string `json:"kind"`     // "folder" or "webdav"
	Location string `json:"location"` // the folder's path or the share's URL
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
}

// Connect connects one of the user's spaces to a source, after checking
// the source can be listed (so a wrong password or path is said at once),
// and replaces the space's connector if it had one. The first sync is
// left to SyncNow or the periodic sync.
func (s *Service) Connect(ctx context.Context, user sova.User, spaceID string, r Request) (*sova.Connector, error) {
	c := &sova.Connector{UserID: user.ID, SpaceID: spaceID, Kind: r.Kind}
	switch r.Kind {
	case sova.ConnectorFolder:
		if !isAdmin(user) {
			return nil, fmt.Errorf("%w: only an administrator may connect a folder of the server", ErrForbidden)
		}
		root, err := s.checkFolder(r.Location)
		if err != nil {
			return nil, err
		}
		c.Location = root
	case sova.ConnectorWebDAV:
		u, err := checkWebDAVURL(r.Location)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", sova.ErrInvalid, err)
		}
		// Checked when given, and again by the transport when dialled.
		if err := s.checkGiven(ctx, u); err != nil {
			return nil, fmt.Errorf("%w: %v", sova.ErrInvalid, err)
		}
		c.Location, c.Username, c.Password = u, strings.TrimSpace(r.Username), r.Password
	default:
		return nil, fmt.Errorf("%w: a connector is a \"folder\" or a \"webdav\" share, not %q", sova.ErrInvalid, r.Kind)
	}
	lctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := s.source(*c).List(lctx, s.cfg.MaxFiles); err != nil {
		return nil, fmt.Errorf("%w: cannot read the source: %v", sova.ErrInvalid, err)
	}
	if err := s.store.PutConnector(ctx, c); err != nil {
		return nil, err
	}
	return c, nil
}

// isAdmin reports whether u may connect the server's folders: an admin,
// or the local user of an installation without accounts (who runs the
// server; auth.Local gives it no role).
func isAdmin(u sova.User) bool {
	return u.Role == sova.RoleAdmin || (u.ID == sova.LocalUserID && u.Role == "")
}

// checkFolder resolves a folder to connect: an existing directory,
// under one of the allowed roots when there are any (links resolved
// first, so a link cannot lead out of them).
func (s *Service) checkFolder(p string) (string, error) {
	p = strings.TrimSpace(p)
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%w: give the folder's absolute path on the server", sova.ErrInvalid)
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(p))
	if err == nil {
		var info os.FileInfo
		if info, err = os.Stat(real); err == nil && !info.IsDir() {
			err = errors.New("not a folder")
		}
	}
	if err != nil {
		return "", fmt.Errorf("%w: folder %s: %v", sova.ErrInvalid, p, err)
	}
	if len(s.cfg.FolderRoots) == 0 {
		return real, nil
	}
	for _, root := range s.cfg.FolderRoots {
		r, err := filepath.EvalSymlinks(filepath.Clean(root))
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(r, real); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return real, nil
		}
	}
	return "", fmt.Errorf("%w: %s is outside the folders that may be connected (SOVA_CONNECTORS_FOLDER_ROOTS)", ErrForbidden, p)
}

// source is the Source of a connector.
func (s *Service) source(c sova.Connector) Source {
	if c.Kind == sova.ConnectorFolder {
		return Folder{Root: c.Location}
	}
	return WebDAV{URL: c.Location, Username: c.Username, Password: c.Password, Transport: s.cfg.Transport, Timeout: 5 * time.Minute}
}

// Get returns the connector of one of the user's spaces.
func (s *Service) Get(ctx context.Context, userID, spaceID string) (*sova.Connector, error) {
	return s.store.GetConnector(ctx, userID, spaceID)
}

// List returns the user's connectors.
func (s *Service) List(ctx context.Context, userID string) ([]sova.Connector, error) {
	return s.store.ListConnectors(ctx, userID)
}

// Disconnect removes a space's connector; the documents stay.
func (s *Service) Disconnect(ctx context.Context, userID, spaceID string) error {
	return s.store.DeleteConnector(ctx, userID, spaceID)
}

// SyncNow syncs one of the user's spaces with its source and returns the
// connector as the sync left it. A sync of it already running is waited
// for and then run again.
func (s *Service) SyncNow(ctx context.Context, userID, spaceID string) (*sova.Connector, error) {
	c, err := s.store.GetConnector(ctx, userID, spaceID)
	if err != nil {
		return nil, err
	}
	if _, err := s.sync(ctx, *c); err != nil && ctx.Err() != nil {
		return nil, err
	}
	return s.store.GetConnector(ctx, userID, spaceID)
}

// sync runs one sync of c and records its outcome; one sync of a
// connector at a time.
func (s *Service) sync(ctx context.Context, c sova.Connector) (sova.SyncResult, error) {
	for {
		s.mu.Lock()
		running, busy := s.syncing[c.ID]
		if !busy {
			done := make(chan struct{})
			s.syncing[c.ID] = done
			s.mu.Unlock()
			defer func() {
				s.mu.Lock()
				delete(s.syncing, c.ID)
				s.mu.Unlock()
				close(done)
			}()
			break
		}
		s.mu.Unlock()
		select {
		case <-running:
		case <-ctx.Done():
			return sova.SyncResult{}, ctx.Err()
		}
	}
	sctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	res, err := s.syncOnce(sctx, c)
	msg := ""
	if err != nil {
		msg = err.Error()
		// The space, the connector and the error only: never the
		// connector's credentials.
		s.log.Warn("connector sync failed", "space", c.SpaceID, "connector", c.ID, "kind", c.Kind, "err", err)
	}
	if ctx.Err() != nil {
		return res, err // shutting down: the next start syncs again
	}
	// Recorded even when the request that asked for it left.
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer rcancel()
	if serr := s.store.SetConnectorSynced(rctx, c.ID, time.Now(), res, msg); serr != nil && !errors.Is(serr, sova.ErrNotFound) {
		s.log.Warn("recording a connector's sync failed", "connector", c.ID, "err", serr)
	}
	return res, err
}

// maxErrors bounds the failed files a sync names.
const maxErrors = 10

// syncOnce brings the space in line with its source.
func (s *Service) syncOnce(ctx context.Context, c sova.Connector) (sova.SyncResult, error) {
	var res sova.SyncResult
	src := s.source(c)
	entries, err := src.List(ctx, s.cfg.MaxFiles)
	if err != nil {
		return res, err
	}
	seenList, err := s.store.SyncedFiles(ctx, c.ID)
	if err != nil {
		return res, err
	}
	seen := make(map[string]sova.SyncedFile, len(seenList))
	for _, f := range seenList {
		seen[f.Path] = f
	}
	docs, err := s.spaces.Documents(ctx, c.UserID, c.SpaceID)
	if err != nil {
		return res, err
	}
	byName := make(map[string]sova.Document, len(docs))
	for _, d := range docs {
		byName[d.Name] = d
	}

	// New and changed files; a file whose document was deleted from the
	// space by hand is read again.
	var (
		files   []spaces.File
		pending = map[string]Entry{}
		present = make(map[string]bool, len(entries))
	)
	for _, e := range entries {
		name, err := spaces.CleanName(e.Path)
		if err != nil {
			res.Failed++
			addError(&res, e.Path, err)
			continue
		}
		present[name] = true
		old, known := seen[name]
		_, inSpace := byName[name]
		if known && inSpace && !changed(old, e) {
			res.Unchanged++
			continue
		}
		e.Path = name
		pending[name] = e
		files = append(files, spaces.File{Name: name, Open: func() (io.ReadCloser, error) { return src.Open(ctx, e.Path) }})
	}
	var put []sova.SyncedFile
	if len(files) > 0 {
		results, err := s.spaces.Add(ctx, c.UserID, c.SpaceID, files, spaces.AddOptions{})
		for _, r := range results {
			e, ok := pending[r.Name]
			if !ok {
				continue
			}
			switch r.Status {
			case spaces.StatusAdded:
				res.Added++
			case spaces.StatusReplaced:
				res.Updated++
			case spaces.StatusUnchanged:
				res.Unchanged++
			default:
				res.Failed++
				addError(&res, r.Name, errors.New(r.Error))
				continue // not recorded: tried again next time
			}
			put = append(put, sova.SyncedFile{Path: e.Path, ETag: e.ETag, Size: e.Size, ModTime: e.ModTime})
		}
		if err != nil {
			if perr := s.store.PutSyncedFiles(ctx, c.ID, put, nil); perr != nil {
				s.log.Warn("recording a connector's files failed", "connector", c.ID, "err", perr)
			}
			return res, err
		}
	}

	// Files gone from the source: their documents go, if the connector
	// brought them (documents uploaded by hand stay).
	var removed, removeDocs []string
	for p := range seen {
		if present[p] {
			continue
		}
		removed = append(removed, p)
		if d, ok := byName[p]; ok {
			removeDocs = append(removeDocs, d.ID)
		}
	}
	if len(removeDocs) > 0 {
		if err := s.spaces.DeleteDocuments(ctx, c.UserID, c.SpaceID, removeDocs); err != nil && !errors.Is(err, sova.ErrNotFound) {
			_ = s.store.PutSyncedFiles(ctx, c.ID, put, nil)
			return res, fmt.Errorf("removing documents whose files are gone: %w", err)
		}
	}
	res.Removed = len(removeDocs)
	if err := s.store.PutSyncedFiles(ctx, c.ID, put, removed); err != nil {
		return res, err
	}
	return res, nil
}

// changed reports whether a file differs from what the last sync saw:
// by ETag where the source gives one, else by modification time and size.
func changed(old sova.SyncedFile, e Entry) bool {
	if old.ETag != "" && e.ETag != "" {
		return old.ETag != e.ETag
	}
	return old.Size != e.Size || !old.ModTime.Equal(e.ModTime.UTC().Truncate(time.Millisecond))
}

func addError(res *sova.SyncResult, name string, err error) {
	if len(res.Errors) < maxErrors {
		msg := err.Error()
		if !strings.HasPrefix(msg, name+":") {
			msg = name + ": " + msg
		}
		res.Errors = append(res.Errors, msg)
	}
}

// Start runs the periodic sync until Stop: every connector whose last
// sync is older than the interval is synced, one at a time. Without an
// interval it does nothing.
func (s *Service) Start() {
	if s.cfg.Interval <= 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stop, s.done = cancel, make(chan struct{})
	go func() {
		defer close(s.done)
		s.loop(ctx)
	}()
}

// Stop ends the periodic sync and waits for a sync in progress to stop.
func (s *Service) Stop() {
	if s.stop == nil {
		return
	}
	s.stop()
	<-s.done
}

func (s *Service) loop(ctx context.Context) {
	tick := min(s.cfg.Interval, time.Minute)
	t := time.NewTimer(5 * time.Second) // first round soon after start
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.SyncDue(ctx)
		t.Reset(tick)
	}
}

// SyncDue syncs every connector due a sync (last synced longer than the
// interval ago), oldest first.
func (s *Service) SyncDue(ctx context.Context) {
	due, err := s.store.DueConnectors(ctx, time.Now().Add(-s.cfg.Interval), 100)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("listing connectors to sync failed", "err", err)
		}
		return
	}
	for _, c := range due {
		if ctx.Err() != nil {
			return
		}
		_, _ = s.sync(ctx, c) // failures are recorded on the connector and logged
	}
}
