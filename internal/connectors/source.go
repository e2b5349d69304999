package connectors

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/studio-b12/gowebdav"

	"github.com/sova-ai/sova/internal/egress"
	"github.com/sova-ai/sova/internal/spaces"
)

// Entry is one file of a source: its path relative to the source's root
// (forward slashes), and what tells a change without reading it.
type Entry struct {
	Path    string
	ETag    string
	Size    int64
	ModTime time.Time
}

// Source is where a connected space's files come from.
type Source interface {
	// List returns the files a space can hold (Markdown, text, HTML, PDF,
	// DOCX), at most max of them; more is an error.
	List(ctx context.Context, max int) ([]Entry, error)
	// Open reads one listed file.
	Open(ctx context.Context, path string) (io.ReadCloser, error)
}

// ErrTooManyFiles is returned by List when a source has more files than
// allowed (SOVA_CONNECTORS_MAX_FILES).
var ErrTooManyFiles = errors.New("too many files")

// maxDepth bounds how deep a source's folders are walked.
const maxDepth = 32

// skipName reports whether a file or folder is left out: hidden ones
// (".git", ".DS_Store", Nextcloud's ".sync_…") and kinds a space cannot
// hold.
func skipName(name string, dir bool) bool {
	if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "~$") {
		return true
	}
	return !dir && !spaces.SupportedExtension(name)
}

// Folder is a folder of the server's file system. Files are opened
// through an os.Root, so a symbolic link cannot lead out of the folder;
// links are not followed when listing.
type Folder struct {
	Root string
}

// List implements Source.
func (f Folder) List(ctx context.Context, max int) ([]Entry, error) {
	var out []Entry
	err := filepath.WalkDir(f.Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == f.Root {
				return err
			}
			return nil // an unreadable subfolder is skipped, not fatal
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if p == f.Root {
			return nil
		}
		rel, err := filepath.Rel(f.Root, p)
		if err != nil {
			return err
		}
		if skipName(d.Name(), d.IsDir()) || d.Type()&fs.ModeSymlink != 0 {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if strings.Count(rel, string(filepath.Separator)) >= maxDepth {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil // removed meanwhile
		}
		if len(out) >= max {
			return fmt.Errorf("%w: the folder has more than %d files a space can hold (SOVA_CONNECTORS_MAX_FILES)", ErrTooManyFiles, max)
		}
		out = append(out, Entry{Path: filepath.ToSlash(rel), Size: info.Size(), ModTime: info.ModTime().UTC()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading folder %s: %w", f.Root, err)
	}
	return out, nil
}

// Open implements Source.
func (f Folder) Open(_ context.Context, p string) (io.ReadCloser, error) {
	root, err := os.OpenRoot(f.Root)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.Open(filepath.FromSlash(p))
}

// WebDAV is a WebDAV share (Nextcloud: https://host/remote.php/dav/files/USER/FOLDER).
type WebDAV struct {
	URL, Username, Password string
	// Transport sends the requests (the guarded dialer of Config).
	Transport http.RoundTripper
	// Timeout bounds one request.
	Timeout time.Duration
}

// client is a client whose requests end with ctx: gowebdav takes no
// context, so the transport adds it.
func (w WebDAV) client(ctx context.Context) *gowebdav.Client {
	c := gowebdav.NewClient(w.URL, w.Username, w.Password)
	base := w.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.SetTransport(ctxTransport{ctx: ctx, base: base})
	if w.Timeout > 0 {
		c.SetTimeout(w.Timeout)
	}
	return c
}

type ctxTransport struct {
	ctx  context.Context
	base http.RoundTripper
}

func (t ctxTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return t.base.RoundTrip(r.WithContext(t.ctx))
}

// List implements Source: the share's folders walked with PROPFIND
// (Depth: 1), one folder at a time.
func (w WebDAV) List(ctx context.Context, max int) ([]Entry, error) {
	c := w.client(ctx)
	var out []Entry
	type dir struct {
		path  string
		depth int
	}
	queue := []dir{{"/", 0}}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		infos, err := c.ReadDir(d.path)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("listing %s on the WebDAV share: %w", d.path, webdavError(err))
		}
		for _, info := range infos {
			name := info.Name()
			p := path.Join(d.path, name)
			if skipName(name, info.IsDir()) {
				continue
			}
			if info.IsDir() {
				if d.depth+1 < maxDepth {
					queue = append(queue, dir{p + "/", d.depth + 1})
				}
				continue
			}
			if len(out) >= max {
				return nil, fmt.Errorf("%w: the share has more than %d files a space can hold (SOVA_CONNECTORS_MAX_FILES)", ErrTooManyFiles, max)
			}
			e := Entry{Path: strings.TrimPrefix(p, "/"), Size: info.Size(), ModTime: info.ModTime().UTC()}
			if f, ok := info.(gowebdav.File); ok {
				e.ETag = f.ETag()
			}
			out = append(out, e)
		}
	}
	return out, nil
}

// Open implements Source.
func (w WebDAV) Open(ctx context.Context, p string) (io.ReadCloser, error) {
	rc, err := w.client(ctx).ReadStream("/" + p)
	if err != nil {
		return nil, webdavError(err)
	}
	return rc, nil
}

// webdavError says what a person can do about a WebDAV failure.
func webdavError(err error) error {
	switch {
	case gowebdav.IsErrCode(err, http.StatusUnauthorized), gowebdav.IsErrCode(err, http.StatusForbidden):
		return fmt.Errorf("the share refused the user name and password (for Nextcloud, use an app password): %w", err)
	case gowebdav.IsErrNotFound(err):
		return fmt.Errorf("no such folder on the share (for Nextcloud: https://HOST/remote.php/dav/files/USER/FOLDER): %w", err)
	}
	var blocked *BlockedError
	if errors.As(err, &blocked) {
		return blocked
	}
	return err
}

// BlockedError is a WebDAV address the server refuses to reach (the
// egress guard's refusal).
type BlockedError = egress.BlockedError

// PrivateSetting is the switch that lets shares on private networks be
// connected; no switch opens a cloud instance-metadata address.
const PrivateSetting = "SOVA_CONNECTORS_ALLOW_PRIVATE"

// policy is the egress policy of WebDAV shares.
func policy(allowPrivate bool) egress.Policy {
	return egress.Policy{AllowPrivate: allowPrivate, PrivateSetting: PrivateSetting}
}

// GuardedTransport is the egress transport of WebDAV shares: every
// address it connects to is checked after DNS (so a name cannot point
// around the check), every request's URL before it is sent, and proxy
// settings are ignored.
func GuardedTransport(allowPrivate bool) http.RoundTripper {
	return egress.NewTransport(egress.NewGuard(policy(allowPrivate)), nil, time.Minute)
}

// checkWebDAVURL accepts http(s) URLs without credentials in them.
func checkWebDAVURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("a WebDAV share needs an http(s) URL, such as https://cloud.example.com/remote.php/dav/files/USER/Documents")
	}
	if u.User != nil {
		return "", errors.New("put the user name and password in their own fields, not in the URL")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", errors.New("a WebDAV URL has no query or fragment")
	}
	return u.String(), nil
}
