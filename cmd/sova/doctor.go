package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sova-ai/sova/internal/doctor"
)

func newDoctor() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the setup: model endpoint, key, models, search, database, sandbox",
		Long: `Check the setup as a first question would meet it, and print one line per
check with ✓ or ✗ and, for a failure, what to fix:

  model endpoint   SOVA_LLM_BASE_URL answers GET /models
  API key          the endpoint accepts SOVA_LLM_API_KEY (or OPENAI_API_KEY)
  main model       SOVA_MODEL is among the models the endpoint lists
  fast model       SOVA_FAST_MODEL likewise (and SOVA_FALLBACK_MODEL when set)
  web search       each configured provider answers one small query
  data directory   SOVA_DATA_DIR is writable
  database         the database opens and its schema is up to date
  code sandbox     bubblewrap and python3 with numpy, pandas and matplotlib
                   (optional: reported as available or unavailable)

The exit status is 1 when a required check fails. Nothing is asked of the
model: listing its models costs no tokens.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig()
			if err != nil {
				r := doctor.NewReport([]doctor.Check{{Name: "configuration", Status: doctor.Fail, Required: true,
					Detail: err.Error(), Fix: "correct the variable named (docs/configuration.md)"}})
				return printReport(cmd, r, asJSON)
			}
			return printReport(cmd, doctor.Run(cmd.Context(), cfg, doctor.Options{}), asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the checks as JSON")
	return cmd
}

// printReport prints r and fails, without another message, when a required
// check failed.
func printReport(cmd *cobra.Command, r doctor.Report, asJSON bool) error {
	var err error
	if asJSON {
		err = r.WriteJSON(cmd.OutOrStdout())
	} else {
		err = r.WriteText(cmd.OutOrStdout())
	}
	if err != nil {
		return err
	}
	if !r.OK {
		return shownError{fmt.Errorf("doctor: %d required checks failed", len(r.Failed()))}
	}
	return nil
}
