package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/fetch"
	"github.com/sova-ai/sova/internal/lang"
	"github.com/sova-ai/sova/internal/spaces"
)

// maxReadFileBytes bounds a file given to sova read.
const maxReadFileBytes = 64 << 20

func newRead() *cobra.Command {
	var (
		format string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "read URL|FILE...",
		Short: "Print the main content of web pages or files as Markdown",
		Long: `Read web pages and files the way Sova reads them for an answer, and print
their main content: navigation, adverts, cookie notices and other
boilerplate removed, Markdown with absolute links.

URLs (http and https) are fetched through the same guarded reader the
modes use: private and loopback addresses are refused unless
SOVA_FETCH_ALLOW_HOSTS allows them, SOVA_FETCH_TIMEOUT and
SOVA_FETCH_MAX_BYTES apply, and SOVA_READER_FALLBACK reads pages the
reader cannot. Files may be HTML (main content extracted the same way),
PDF, DOCX, Markdown or plain text. The whole content is printed, not the
3,000 characters a model is given.

--format text prints plain text instead of Markdown; --json prints one
JSON object a line with url (or file), title, author, date, language,
site and text.`,
		Example: `  sova read https://example.com/article
  sova read --format text report.pdf notes.docx
  sova read --json page.html | jq .title`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "markdown" && format != "text" {
				return fmt.Errorf("--format %q: use markdown or text", format)
			}
			var reader fetch.Reader
			for _, a := range args {
				if isWebURL(a) {
					cfg, err := loadConfig()
					if err != nil {
						return err
					}
					if reader, err = readerFor(cfg); err != nil {
						return err
					}
					break
				}
			}
			out := cmd.OutOrStdout()
			failed := 0
			for i, a := range args {
				doc, err := readOne(cmd.Context(), reader, a)
				if err != nil {
					failed++
					fmt.Fprintf(cmd.ErrOrStderr(), "sova read: %v\n", err)
					continue
				}
				if format == "text" {
					doc.Text = fetch.PlainText(doc.Text)
				}
				if asJSON {
					if err := json.NewEncoder(out).Encode(doc); err != nil {
						return err
					}
					continue
				}
				if i > 0 && len(args) > 1 {
					fmt.Fprintln(out)
				}
				if err := writeDocument(out, doc, format, len(args) > 1); err != nil {
					return err
				}
			}
			if failed > 0 {
				return shownError{fmt.Errorf("sova read: %d of %d could not be read", failed, len(args))}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "markdown", "markdown or text")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object a line: url or file, title, author, date, language, site, text")
	return cmd
}

// readDoc is what sova read prints for one page or file.
type readDoc struct {
	URL       string `json:"url,omitempty"`
	File      string `json:"file,omitempty"`
	Title     string `json:"title,omitempty"`
	Author    string `json:"author,omitempty"`
	Date      string `json:"date,omitempty"`
	Language  string `json:"language,omitempty"`
	Site      string `json:"site,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
	Text      string `json:"text"`
}

func isWebURL(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// readerFor builds the page reader the modes use: the guarded fetcher,
// with the external reader behind it when one is configured; the content
// is not trimmed.
func readerFor(cfg *config.Config) (fetch.Reader, error) {
	redirects := cfg.FetchMaxRedirects
	if redirects == 0 {
		redirects = -1
	}
	fcfg := fetch.Config{
		AllowHosts: cfg.FetchAllowHosts, MaxBytes: cfg.FetchMaxBytes, Timeout: cfg.FetchTimeout,
		MaxRedirects: redirects, MaxChars: -1,
	}
	if err := fcfg.Validate(); err != nil {
		return nil, err
	}
	fetcher := fetch.New(fcfg)
	if cfg.ReaderFallback == "" {
		return fetcher, nil
	}
	ext, err := fetch.NewExternalReader(fetch.ExternalConfig{
		Service: cfg.ReaderFallback, BaseURL: cfg.ReaderURL, APIKey: cfg.ReaderAPIKey,
		Timeout: cfg.ReaderTimeout, MaxBytes: cfg.FetchMaxBytes, MaxChars: -1, CheckURL: fetcher.CheckURL,
	})
	if err != nil {
		return nil, fmt.Errorf("SOVA_READER_FALLBACK: %w", err)
	}
	return &fetch.Fallback{Primary: fetcher, Next: ext, MinChars: cfg.ReaderMinChars}, nil
}

func readOne(ctx context.Context, reader fetch.Reader, arg string) (readDoc, error) {
	if isWebURL(arg) {
		p, err := reader.Fetch(ctx, arg)
		if err != nil {
			return readDoc{}, err
		}
		return pageDoc(p, readDoc{URL: p.URL}), nil
	}
	f, err := os.Open(arg)
	if err != nil {
		return readDoc{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxReadFileBytes+1))
	if err != nil {
		return readDoc{}, fmt.Errorf("%s: %w", arg, err)
	}
	if len(data) > maxReadFileBytes {
		return readDoc{}, fmt.Errorf("%s: larger than %d MiB", arg, maxReadFileBytes>>20)
	}
	format, err := spaces.DetectFormat(filepath.Base(arg), data)
	if err != nil {
		return readDoc{}, err
	}
	if format == spaces.FormatHTML {
		// Web pages saved as files are read as the web reader reads them.
		p, err := fetch.ReadDocument(ctx, data, "text/html", "")
		if err != nil {
			return readDoc{}, fmt.Errorf("%s: %w", arg, err)
		}
		return pageDoc(p, readDoc{File: arg}), nil
	}
	title, md, err := spaces.Markdown(filepath.Base(arg), data)
	if err != nil {
		return readDoc{}, err
	}
	return readDoc{File: arg, Title: title, Language: lang.Detect(md).Code, Text: md}, nil
}

func pageDoc(p *fetch.Page, d readDoc) readDoc {
	d.Title, d.Author, d.Date, d.Site, d.Truncated, d.Text = p.Title, p.Author, p.Published, p.SiteName, p.Truncated, p.Markdown
	d.Language = p.Language
	if d.Language == "" {
		d.Language = lang.Detect(p.Markdown).Code
	}
	return d
}

// writeDocument prints one document: its title as a heading (and, when
// several are printed, where it came from), then its text.
func writeDocument(w io.Writer, d readDoc, format string, several bool) error {
	var b strings.Builder
	first, _, _ := strings.Cut(strings.TrimSpace(d.Text), "\n")
	if d.Title != "" && strings.TrimSpace(strings.TrimLeft(first, "#")) != d.Title {
		if format == "markdown" {
			b.WriteString("# ")
		}
		b.WriteString(d.Title + "\n\n")
	}
	if several {
		src := d.URL
		if src == "" {
			src = d.File
		}
		b.WriteString("Source: " + src + "\n\n")
	}
	b.WriteString(strings.TrimSpace(d.Text) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}
