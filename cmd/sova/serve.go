package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/sova-ai/sova/internal/app"
	"github.com/sova-ai/sova/internal/doctor"
	"github.com/sova-ai/sova/internal/server"
)

func newServe() *cobra.Command {
	var addr string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the HTTP server (API and OpenAI-compatible endpoint)",
		Long: `Run the HTTP server. It listens on SOVA_ADDR (default 127.0.0.1:8080).

There is no authentication yet, so the default address accepts connections
from this machine only. To expose Sova on a network, put it behind a proxy
that authenticates, and set SOVA_ADDR=0.0.0.0:8080.

Sova answers only to the host names it is configured for: localhost and
loopback addresses, the host of SOVA_PUBLIC_URL, the names in
SOVA_ALLOWED_HOSTS, and the listen address (any IP address when it listens
on all interfaces). Other sites' pages cannot act on it through a browser.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			if addr != "" {
				cfg.Addr = addr
			}
			logger := newLogger(os.Stderr, cfg.LogLevel)
			ctx := cmd.Context()
			a, err := app.New(ctx, cfg, logger)
			if err != nil {
				return err
			}
			srv := &http.Server{
				Handler: server.New(server.Options{
					Service: a.Service, Store: a.Store, Auth: a.Auth, Logger: logger,
					MaxBodyBytes: cfg.MaxRequestBodyBytes, Version: versionString(),
					Spaces: a.Spaces, MaxUploadBytes: cfg.SpacesMaxUploadBytes, MaxFileBytes: cfg.SpacesMaxFileBytes,
					PublicURL: cfg.PublicURL, AllowedHosts: cfg.AllowedHosts, Addr: cfg.Addr,
				}),
				ReadHeaderTimeout: 10 * time.Second,
				ReadTimeout:       30 * time.Second,
				IdleTimeout:       2 * time.Minute,
				// No WriteTimeout: answers stream for as long as a run may
				// take, and SOVA_RUN_TIMEOUT bounds that.
			}
			ln, err := net.Listen("tcp", cfg.Addr)
			if err != nil {
				_ = a.Close(context.Background())
				return fmt.Errorf("listening on %s: %w", cfg.Addr, err)
			}
			if exposed, msg := listenScope(ln.Addr()); exposed {
				logger.Warn(msg, "addr", "http://"+ln.Addr().String())
			} else {
				logger.Info(msg, "addr", "http://"+ln.Addr().String())
			}
			logger.Info("sova ready", "version", versionString(), "model", cfg.Model, "fast_model", cfg.FastModel,
				"search", cfg.SearchProvider, "data_dir", cfg.DataDir)
			go doctor.AtStart(ctx, cfg, logger, doctor.Options{}) // warns once, with the fix, when the model endpoint is unusable

			errc := make(chan error, 1)
			go func() { errc <- srv.Serve(ln) }()
			select {
			case err := <-errc:
				_ = a.Close(context.Background())
				return err
			case <-ctx.Done():
			}
			logger.Info("shutting down: waiting for running answers to finish")
			sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err = srv.Shutdown(sctx)
			if errors.Is(err, context.DeadlineExceeded) {
				_ = srv.Close() // runs still going are cancelled and keep what streamed
			}
			<-errc
			return a.Close(sctx)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "", "listen address (overrides SOVA_ADDR)")
	return cmd
}

// listenScope says who can reach the address the server really listens on
// (a host name in SOVA_ADDR has been resolved to one address by then), and
// whether that goes beyond this machine.
func listenScope(addr net.Addr) (exposed bool, msg string) {
	var ip net.IP
	if ta, ok := addr.(*net.TCPAddr); ok {
		ip = ta.IP
	} else if host, _, err := net.SplitHostPort(addr.String()); err == nil {
		ip = net.ParseIP(host)
	}
	switch {
	case ip != nil && ip.IsLoopback():
		return false, "listening on this machine only; set SOVA_ADDR=0.0.0.0:8080 to expose it (there is no authentication yet)"
	case ip == nil || ip.IsUnspecified():
		return true, "listening on all interfaces without authentication"
	default:
		return true, "listening on " + ip.String() + " without authentication: anyone who can reach that address can use Sova"
	}
}
