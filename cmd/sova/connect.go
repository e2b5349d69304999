package main

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/app"
	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/connectors"
	"github.com/sova-ai/sova/internal/spaces"
	"github.com/sova-ai/sova/internal/store"
)

// withConnectors opens the store, the spaces and the connectors' service
// (not its periodic sync, which is the server's).
func withConnectors(cmd *cobra.Command, fn func(*spaces.Service, *connectors.Service) error) error {
	return withSpacesStore(cmd.Context(), func(cfg *config.Config, st *store.DB, sp *spaces.Service, logger *slog.Logger) error {
		return fn(sp, app.Connectors(cfg, st, sp, logger))
	})
}

func spacesConnect() *cobra.Command {
	var folder, webdav, user string
	var passwordStdin, noSync bool
	cmd := &cobra.Command{
		Use:   "connect NAME (--folder PATH | --webdav URL --user USER --password-stdin)",
		Short: "Keep a space in sync with a folder of this machine or a WebDAV share (Nextcloud)",
		Long: `Connects a space to a source: its supported files (Markdown, text, HTML,
PDF, DOCX) become the space's documents, and "sova serve" keeps them in
sync every SOVA_CONNECTORS_SYNC_INTERVAL: new and changed files are read,
deleted ones removed. Documents added by hand stay. The password is read
from standard input, stored with the connector and never shown.`,
		Example: `  sova spaces connect notes --folder /srv/notes
  echo "$APP_PASSWORD" | sova spaces connect cloud --webdav https://cloud.example.com/remote.php/dav/files/anna/Documents --user anna --password-stdin`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := connectors.Request{Kind: sova.ConnectorFolder, Location: folder}
			switch {
			case (folder == "") == (webdav == ""):
				return fmt.Errorf("give --folder PATH or --webdav URL")
			case webdav != "":
				req = connectors.Request{Kind: sova.ConnectorWebDAV, Location: webdav, Username: user}
				if passwordStdin {
					pw, err := bufio.NewReader(io.LimitReader(cmd.InOrStdin(), 4096)).ReadString('\n')
					if err != nil && err != io.EOF {
						return fmt.Errorf("reading the password: %w", err)
					}
					req.Password = strings.TrimRight(pw, "\r\n")
				}
			}
			return withConnectors(cmd, func(sp *spaces.Service, svc *connectors.Service) error {
				ctx := cmd.Context()
				space, err := sp.Space(ctx, userID(ctx), args[0])
				if err != nil {
					return err
				}
				u, _ := sova.UserFrom(ctx)
				if _, err := svc.Connect(ctx, u, space.ID, req); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "connected %q to %s\n", space.Name, req.Location)
				if noSync {
					return nil
				}
				return syncAndReport(cmd, svc, space)
			})
		},
	}
	cmd.Flags().StringVar(&folder, "folder", "", "a folder of this machine (an absolute path)")
	cmd.Flags().StringVar(&webdav, "webdav", "", "the WebDAV URL of the folder to sync")
	cmd.Flags().StringVar(&user, "user", "", "the WebDAV user name")
	cmd.Flags().BoolVar(&passwordStdin, "password-stdin", false, "read the WebDAV password (for Nextcloud, an app password) from standard input")
	cmd.Flags().BoolVar(&noSync, "no-sync", false, "connect only; the server syncs later")
	return cmd
}

func syncAndReport(cmd *cobra.Command, svc *connectors.Service, space *sova.Space) error {
	c, err := svc.SyncNow(cmd.Context(), userID(cmd.Context()), space.ID)
	if err != nil {
		return err
	}
	r := c.LastResult
	fmt.Fprintf(cmd.OutOrStdout(), "synced %q: %d added, %d updated, %d removed, %d unchanged, %d failed\n",
		space.Name, r.Added, r.Updated, r.Removed, r.Unchanged, r.Failed)
	for _, e := range r.Errors {
		fmt.Fprintln(cmd.ErrOrStderr(), "  "+e)
	}
	if c.LastError != "" {
		return fmt.Errorf("sync of %q failed: %s", space.Name, c.LastError)
	}
	return nil
}

func spacesSync() *cobra.Command {
	return &cobra.Command{
		Use:   "sync NAME",
		Short: "Sync a connected space with its source now",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withConnectors(cmd, func(sp *spaces.Service, svc *connectors.Service) error {
				space, err := sp.Space(cmd.Context(), userID(cmd.Context()), args[0])
				if err != nil {
					return err
				}
				return syncAndReport(cmd, svc, space)
			})
		},
	}
}

func spacesDisconnect() *cobra.Command {
	return &cobra.Command{
		Use:   "disconnect NAME",
		Short: "Stop syncing a space with its source (its documents stay)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withConnectors(cmd, func(sp *spaces.Service, svc *connectors.Service) error {
				space, err := sp.Space(cmd.Context(), userID(cmd.Context()), args[0])
				if err != nil {
					return err
				}
				if err := svc.Disconnect(cmd.Context(), userID(cmd.Context()), space.ID); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "disconnected %q\n", space.Name)
				return nil
			})
		},
	}
}
