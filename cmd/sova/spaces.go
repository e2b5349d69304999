package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sova-ai/sova"

	"github.com/dustin/go-humanize"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/sova-ai/sova/internal/app"
	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/spaces"
	"github.com/sova-ai/sova/internal/store"
)

func newSpaces() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "spaces",
		Short: "Manage document spaces: named collections of your files to search",
		Long: `A document space is a named collection of your files (Markdown, plain
text, HTML, PDF, DOCX). Sova cuts them into passages that keep their
headings and indexes them for search in Russian and English; the docs mode
answers from them, and --space adds them to "sova ask" in the search modes.

The index lives in SOVA_DATA_DIR/spaces. One process at a time opens a
space's index: while "sova serve" uses a space (it lets go after
SOVA_SPACES_IDLE_CLOSE idle), add files through its API instead.`,
		Example: `  sova spaces create notes --description "meeting notes 2024"
  sova spaces add notes ~/Documents/notes
  sova spaces list
  sova spaces list notes
  sova spaces search notes "budget for the Vostok project"
  sova ask --mode docs "What did we decide about the budget?"
  sova spaces rm notes old/2019.md
  sova spaces rm notes`,
	}
	cmd.AddCommand(spacesCreate(), spacesAdd(), spacesList(), spacesRename(), spacesRemove(), spacesSearch())
	cmd.AddCommand(spacesConnect(), spacesSync(), spacesDisconnect()) // connect.go
	return cmd
}

// withSpaces opens the store and the document spaces only: managing
// spaces needs no chat model or web search.
func withSpaces(ctx context.Context, fn func(*spaces.Service) error) error {
	return withSpacesStore(ctx, func(_ *config.Config, _ *store.DB, svc *spaces.Service, _ *slog.Logger) error {
		return fn(svc)
	})
}

// withSpacesStore opens the store and the spaces over it for fn, and
// closes both after.
func withSpacesStore(ctx context.Context, fn func(*config.Config, *store.DB, *spaces.Service, *slog.Logger) error) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	logger := newLogger(os.Stderr, "warn")
	st, err := store.Open(ctx, cfg.DatabaseURL, cfg.DataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	embed, err := app.EmbeddingClient(cfg, logger)
	if err != nil {
		return err
	}
	svc, err := app.OpenSpaces(cfg, st, embed, logger)
	if err != nil {
		return err
	}
	defer svc.Close()
	return fn(cfg, st, svc, logger)
}

func spacesCreate() *cobra.Command {
	var desc string
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a space",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withSpaces(cmd.Context(), func(svc *spaces.Service) error {
				sp, err := svc.CreateSpace(cmd.Context(), userID(cmd.Context()), args[0], desc)
				if errors.Is(err, sova.ErrConflict) {
					return fmt.Errorf("a space named %q exists already", args[0])
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "created space %q (%s)\n", sp.Name, sp.ID)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&desc, "description", "", "what the space holds (shown to the docs mode)")
	return cmd
}

func spacesAdd() *cobra.Command {
	var create bool
	cmd := &cobra.Command{
		Use:   "add NAME PATH...",
		Short: "Add files and folders (recursively) to a space",
		Long: `Add files to a space. A folder is read recursively: every Markdown, text,
HTML, PDF and DOCX file in it, hidden files and folders aside, named by
its path inside the folder. A file added again replaces its passages when
it changed and is skipped when it did not. Files that cannot be read are
listed and skipped; the others are written in atomic batches.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			files, skipped, err := collectFiles(args[1:])
			if err != nil {
				return err
			}
			stderr := cmd.ErrOrStderr()
			if len(files) == 0 {
				return fmt.Errorf("no files to add in %s (Sova reads .md, .txt, .html, .pdf and .docx files)", strings.Join(args[1:], ", "))
			}
			return withSpaces(cmd.Context(), func(svc *spaces.Service) error {
				ctx := cmd.Context()
				sp, err := svc.Space(ctx, userID(ctx), args[0])
				if errors.Is(err, sova.ErrNotFound) && create {
					sp, err = svc.CreateSpace(ctx, userID(ctx), args[0], "")
				}
				if errors.Is(err, sova.ErrNotFound) {
					return fmt.Errorf("no space %q: create it with `sova spaces create %s` or pass --create", args[0], args[0])
				}
				if err != nil {
					return err
				}
				bar := newBar(stderr, len(files))
				start := time.Now()
				results, addErr := svc.Add(ctx, userID(ctx), sp.ID, files, spaces.AddOptions{
					OnRead: func(string) { _ = bar.Add(1) },
				})
				_ = bar.Finish()
				return reportAdd(cmd.OutOrStdout(), stderr, sp.Name, results, skipped, time.Since(start), addErr)
			})
		},
	}
	cmd.Flags().BoolVar(&create, "create", false, "create the space if it does not exist")
	return cmd
}

// newBar is a progress bar on stderr when stderr is a terminal, and
// silent otherwise (a log gets the summary only).
func newBar(w io.Writer, total int) *progressbar.ProgressBar {
	visible := false
	if f, ok := w.(*os.File); ok {
		visible = isTerminal(f)
	}
	return progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetVisibility(visible),
		progressbar.OptionSetDescription("reading"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetItsString("files"),
		progressbar.OptionShowIts(),
		progressbar.OptionThrottle(80*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}

// collectFiles lists the files to add: files as given (named by their
// base name), folders walked (files named by their path in the folder).
// skipped counts files of other types found in folders.
func collectFiles(paths []string) (files []spaces.File, skipped int, err error) {
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, 0, err
		}
		if !info.IsDir() {
			files = append(files, diskFile(filepath.Base(p), p))
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if path != p && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() || !d.Type().IsRegular() {
				return nil
			}
			if !spaces.SupportedExtension(d.Name()) {
				skipped++
				return nil
			}
			rel, err := filepath.Rel(p, path)
			if err != nil {
				return err
			}
			files = append(files, diskFile(filepath.ToSlash(rel), path))
			return nil
		})
		if err != nil {
			return nil, 0, err
		}
	}
	return files, skipped, nil
}

func diskFile(name, path string) spaces.File {
	return spaces.File{Name: name, Open: func() (io.ReadCloser, error) { return os.Open(path) }}
}

func reportAdd(stdout, stderr io.Writer, space string, results []spaces.FileResult, skipped int, took time.Duration, addErr error) error {
	counts := map[string]int{}
	chunks := 0
	for _, r := range results {
		counts[r.Status]++
		if r.Status == spaces.StatusFailed {
			fmt.Fprintf(stderr, "failed: %s\n", r.Error)
		}
		if r.Document != nil && (r.Status == spaces.StatusAdded || r.Status == spaces.StatusReplaced) {
			chunks += r.Document.ChunkCount
		}
	}
	rate := float64(len(results)) / max(took.Seconds(), 1e-9)
	fmt.Fprintf(stdout, "%s: %d added, %d replaced, %d unchanged, %d failed; %d passages indexed in %s (%.0f files/s)\n",
		space, counts[spaces.StatusAdded], counts[spaces.StatusReplaced], counts[spaces.StatusUnchanged], counts[spaces.StatusFailed],
		chunks, took.Round(time.Millisecond), rate)
	if skipped > 0 {
		fmt.Fprintf(stdout, "%d files of other types were skipped\n", skipped)
	}
	if addErr != nil {
		return fmt.Errorf("adding to %s stopped; the batch that failed left the space as it was: %w", space, addErr)
	}
	if counts[spaces.StatusFailed] > 0 && counts[spaces.StatusFailed] == len(results) {
		return errors.New("no file could be added")
	}
	return nil
}

func spacesList() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list [NAME]",
		Short: "List spaces, or the documents of one space",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withSpaces(cmd.Context(), func(svc *spaces.Service) error {
				ctx, w := cmd.Context(), cmd.OutOrStdout()
				if len(args) == 0 {
					list, err := svc.Spaces(ctx, userID(ctx))
					if err != nil {
						return err
					}
					if asJSON {
						return json.NewEncoder(w).Encode(list)
					}
					tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "NAME\tDOCUMENTS\tPASSAGES\tSIZE\tUPDATED\tID")
					for _, s := range list {
						fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\n", s.Name, s.DocumentCount, s.ChunkCount,
							humanize.IBytes(uint64(s.TotalBytes)), s.UpdatedAt.Local().Format("2006-01-02 15:04"), s.ID)
					}
					return tw.Flush()
				}
				sp, err := svc.Space(ctx, userID(ctx), args[0])
				if err != nil {
					return err
				}
				docs, err := svc.Documents(ctx, userID(ctx), sp.ID)
				if err != nil {
					return err
				}
				if asJSON {
					return json.NewEncoder(w).Encode(map[string]any{"space": sp, "documents": docs})
				}
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "DOCUMENT\tFORMAT\tSIZE\tPASSAGES\tUPDATED\tID")
				for _, d := range docs {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", d.Name, d.Format, humanize.IBytes(uint64(d.Size)), d.ChunkCount,
						d.UpdatedAt.Local().Format("2006-01-02 15:04"), d.ID)
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func spacesRename() *cobra.Command {
	var desc string
	cmd := &cobra.Command{
		Use:   "rename NAME NEW-NAME",
		Short: "Rename a space (and set its description with --description)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withSpaces(cmd.Context(), func(svc *spaces.Service) error {
				ctx := cmd.Context()
				sp, err := svc.Space(ctx, userID(ctx), args[0])
				if err != nil {
					return err
				}
				if !cmd.Flags().Changed("description") {
					desc = sp.Description
				}
				if err := svc.UpdateSpace(ctx, userID(ctx), sp.ID, args[1], desc); err != nil {
					if errors.Is(err, sova.ErrConflict) {
						return fmt.Errorf("a space named %q exists already", args[1])
					}
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "renamed %q to %q\n", sp.Name, args[1])
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&desc, "description", "", "new description")
	return cmd
}

func spacesRemove() *cobra.Command {
	return &cobra.Command{
		Use:   "rm NAME [DOCUMENT...]",
		Short: "Delete a space, or some of its documents (by name or ID)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withSpaces(cmd.Context(), func(svc *spaces.Service) error {
				ctx, w := cmd.Context(), cmd.OutOrStdout()
				sp, err := svc.Space(ctx, userID(ctx), args[0])
				if err != nil {
					return err
				}
				if len(args) == 1 {
					if err := svc.DeleteSpace(ctx, userID(ctx), sp.ID); err != nil {
						return err
					}
					fmt.Fprintf(w, "deleted space %q with its %d documents\n", sp.Name, sp.DocumentCount)
					return nil
				}
				docs, err := svc.Documents(ctx, userID(ctx), sp.ID)
				if err != nil {
					return err
				}
				var ids []string
				for _, ref := range args[1:] {
					found := ""
					for _, d := range docs {
						if d.ID == ref || d.Name == filepath.ToSlash(ref) {
							found = d.ID
						}
					}
					if found == "" {
						return fmt.Errorf("space %q has no document %q (see `sova spaces list %s`)", sp.Name, ref, sp.Name)
					}
					ids = append(ids, found)
				}
				if err := svc.DeleteDocuments(ctx, userID(ctx), sp.ID, ids); err != nil {
					return err
				}
				fmt.Fprintf(w, "deleted %d documents from %q\n", len(ids), sp.Name)
				return nil
			})
		},
	}
}

func spacesSearch() *cobra.Command {
	var (
		limit  int
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "search NAME[,NAME...] QUERY",
		Short: "Search passages in one or more spaces",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withSpaces(cmd.Context(), func(svc *spaces.Service) error {
				ctx, w := cmd.Context(), cmd.OutOrStdout()
				var ids []string
				for _, ref := range strings.Split(args[0], ",") {
					sp, err := svc.Space(ctx, userID(ctx), strings.TrimSpace(ref))
					if err != nil {
						return err
					}
					ids = append(ids, sp.ID)
				}
				hits, err := svc.Search(ctx, userID(ctx), ids, strings.Join(args[1:], " "), limit)
				if err != nil {
					return err
				}
				if asJSON {
					return json.NewEncoder(w).Encode(hits)
				}
				if len(hits) == 0 {
					fmt.Fprintln(w, "nothing found")
				}
				for i, h := range hits {
					fmt.Fprintf(w, "%d. %s — %s  (%.3f)\n   %s\n   %s\n", i+1, h.Document, h.Position(), h.Score, h.Snippet, h.URL)
				}
				return nil
			})
		},
	}
	cmd.Flags().IntVarP(&limit, "limit", "n", 10, "how many passages")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// resolveAskSpaces turns --space names or IDs into space IDs for a mode
// that searches documents.
func resolveAskSpaces(ctx context.Context, a *app.App, modeID string, refs []string) ([]string, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	if m, ok := a.Service.Modes().Get(modeID); ok {
		if da, ok := m.(mode.DocumentAware); !ok || !da.SearchesDocuments() {
			return nil, fmt.Errorf("mode %s does not search document spaces; use --mode search, deep_search or docs with --space", modeID)
		}
	}
	var ids []string
	for _, ref := range refs {
		for _, r := range strings.Split(ref, ",") {
			sp, err := a.Spaces.Space(ctx, userID(ctx), strings.TrimSpace(r))
			if err != nil {
				return nil, err
			}
			ids = append(ids, sp.ID)
		}
	}
	return ids, nil
}
