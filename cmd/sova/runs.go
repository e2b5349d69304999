package main

import (
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/sova-ai/sova"

	"github.com/spf13/cobra"

	"github.com/sova-ai/sova/internal/mode"
)

func newRuns() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List and inspect runs: their state, workspace files and reports",
	}
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Print a run's state (for a chat's id: its latest run)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd.Context(), func(st cliStore) error {
				r, err := findRun(cmd.Context(), st, args[0])
				if err != nil {
					return err
				}
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintf(tw, "id\t%s\nmode\t%s\nstate\t%s\nchat\t%s\nquestion\t%s\ncreated\t%s\nupdated\t%s\nevents\t%d\n",
					r.ID, r.Mode, r.State, r.ChatID, r.Question, r.CreatedAt.Local().Format("2006-01-02 15:04:05"),
					r.UpdatedAt.Local().Format("2006-01-02 15:04:05"), r.LastSeq)
				if r.Usage != nil {
					fmt.Fprintf(tw, "tokens\t%d (%d in, %d out)\n", r.Usage.TotalTokens, r.Usage.InputTokens, r.Usage.OutputTokens)
				}
				if r.Error != "" {
					fmt.Fprintf(tw, "error\t%s\n", r.Error)
				}
				fmt.Fprintf(tw, "report\t%v\n", r.HasReport)
				return tw.Flush()
			})
		},
	}
	var export string
	files := &cobra.Command{
		Use:   "files ID",
		Short: "List a run's workspace files, or export them as a folder",
		Long: `List the workspace files a research run keeps (main.md, draft_report.md,
supervisor.md, agents/agent_N.md, items/item_N.md). With --export DIR they
are written under DIR/run-ID/.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd.Context(), func(st cliStore) error {
				r, err := findRun(cmd.Context(), st, args[0])
				if err != nil {
					return err
				}
				fs, err := st.RunFiles(cmd.Context(), r.ID)
				if err != nil {
					return err
				}
				if export == "" {
					tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "PATH\tBYTES\tUPDATED")
					for _, f := range fs {
						fmt.Fprintf(tw, "%s\t%d\t%s\n", f.Path, f.Size, f.UpdatedAt.Local().Format("2006-01-02 15:04:05"))
					}
					return tw.Flush()
				}
				root := filepath.Join(export, "run-"+r.ID)
				for _, f := range fs {
					content, err := st.RunFile(cmd.Context(), r.ID, f.Path)
					if err != nil {
						return err
					}
					// Paths were cleaned when written; Join keeps them under root.
					dst := filepath.Join(root, filepath.FromSlash(f.Path))
					if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
						return err
					}
					if err := os.WriteFile(dst, []byte(content), 0o644); err != nil {
						return err
					}
				}
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %d files to %s\n", len(fs), root)
				return nil
			})
		},
	}
	files.Flags().StringVar(&export, "export", "", "write the files under this folder")

	var pdfOut string
	rep := &cobra.Command{
		Use:   "report ID",
		Short: "Print a completed research run's report as Markdown, or write it as PDF",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd.Context(), func(st cliStore) error {
				r, err := findRun(cmd.Context(), st, args[0])
				if err != nil {
					return err
				}
				if r.State != sova.RunCompleted || r.Report == "" {
					return fmt.Errorf("run %s has no report (state: %s); reports come with completed research runs", r.ID, r.State)
				}
				if pdfOut == "" {
					_, err := fmt.Fprintln(cmd.OutOrStdout(), r.Report)
					return err
				}
				if err := writePDF(pdfOut, &mode.Result{Report: r.Report}); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "PDF written to %s\n", pdfOut)
				return nil
			})
		},
	}
	rep.Flags().StringVar(&pdfOut, "pdf", "", "write the report to this PDF file instead of printing Markdown")
	cmd.AddCommand(newRunsList(cmd), show, files, rep)
	return cmd
}
