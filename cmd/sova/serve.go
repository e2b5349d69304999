package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sova-ai/sova"
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

On its default address (127.0.0.1:8080) and without accounts, Sova serves
the one person on this machine with no sign-in. Once a user exists
("sova users add NAME --role admin"), every request must sign in (browser)
or carry an API key ("sova keys create"). Listening beyond loopback needs
authentication: Sova refuses to start there until a user exists, unless
SOVA_AUTH=none (everyone who reaches the port is the one local user: for
trusted networks only) or SOVA_ANONYMOUS=true (visitors without an account
get limited, separate use per address). See docs/security.md.

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
			var metricsHandler http.Handler // nil: no /metrics (SOVA_METRICS=false)
			if a.Metrics != nil {
				metricsHandler = a.Metrics.Handler()
			}
			setup := &startChecks{}
			srv := &http.Server{
				Handler: server.New(server.Options{
					Service: a.Service, Store: a.Store, Auth: a.Auth, Accounts: a.Accounts, Logger: logger,
					MaxBodyBytes: cfg.MaxRequestBodyBytes, Version: versionString(),
					Spaces: a.Spaces, MaxUploadBytes: cfg.SpacesMaxUploadBytes, MaxFileBytes: cfg.SpacesMaxFileBytes,
					Memory: a.Memory, Connectors: a.Connectors,
					PublicURL: cfg.PublicURL, AllowedHosts: cfg.AllowedHosts, Addr: cfg.Addr,
					Assistant: a.Assistant, MCPServers: a.Store, MCPAdmin: a.MCP.Servers(), MCPCheckURL: a.MCP.CheckUserURL,
					Voice: a.Voice, MaxAudioBytes: cfg.AudioMaxBytes, Realtime: a.Realtime,
					Images: a.Images, Metrics: metricsHandler, MetricsToken: cfg.MetricsToken, ProFeatures: cfg.ProFeatures,
					Limits: a.Limits, Settings: a.Store, Models: a.Model, Usage: a.Store, OIDC: a.OIDC,
					Redis: a.Redis(), Setup: setup, Shares: shareStore(cfg.ShareLinks, a.Store), MaxShareLinks: cfg.ShareLinksMax,
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
			authed, err := a.Authenticated(ctx)
			if err != nil {
				_ = ln.Close()
				_ = a.Close(context.Background())
				return err
			}
			if exposed, msg := listenScope(ln.Addr()); exposed && !authed {
				_ = ln.Close()
				_ = a.Close(context.Background())
				return errNoAuthentication(ln.Addr().String())
			} else if exposed && cfg.Auth == "none" {
				logger.Warn(msg+" (SOVA_AUTH=none: anyone who can reach it is the local user)", "addr", "http://"+ln.Addr().String())
			} else {
				logger.Info(listenMessage(exposed, msg), "addr", "http://"+ln.Addr().String())
			}
			if exposed, _ := listenScope(ln.Addr()); exposed && a.Metrics != nil && cfg.MetricsToken == "" {
				logger.Warn("GET /metrics is served without a token to everyone who reaches this address: set SOVA_METRICS_TOKEN, or SOVA_METRICS=false, or keep the port off public networks")
			}
			logger.Info("sova ready", "version", versionString(), "model", cfg.Model, "fast_model", cfg.FastModel,
				"search", cfg.SearchProvider, "data_dir", cfg.DataDir)
			a.Connectors.Start() // the periodic sync of connected spaces, stopped by a.Close
			// Warns once, with the fix, when the model endpoint is unusable,
			// and tells the UI's setup banner.
			// (Not `go setup.record(doctor.AtStart(…))`: that would run the
			// checks before serving.)
			go func() { setup.record(doctor.AtStart(ctx, cfg, logger, doctor.Options{})) }()

			errc := make(chan error, 1)
			go func() { errc <- srv.Serve(ln) }()
			select {
			case err := <-errc:
				_ = a.Close(context.Background())
				return err
			case <-ctx.Done():
			}
			// Durable runs are handed back first, so another node continues
			// them at once rather than after the wait for open streams below
			// (their followers here end and resume on another node).
			logger.Info("shutting down: handing durable runs back to the other nodes")
			dctx, cancelDrain := context.WithTimeout(context.Background(), 20*time.Second)
			if err := a.Service.Drain(dctx); err != nil {
				logger.Warn("durable runs not all handed back; the rest are when the node closes", "err", err)
			}
			cancelDrain()
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
		return false, "listening on this machine only; set SOVA_ADDR=0.0.0.0:8080 to expose it (after adding a user: sova users add)"
	case ip == nil || ip.IsUnspecified():
		return true, "listening on all interfaces without authentication"
	default:
		return true, "listening on " + ip.String() + " without authentication: anyone who can reach that address can use Sova"
	}
}

// listenMessage is the start-up line for an address beyond loopback that
// has authentication.
func listenMessage(exposed bool, msg string) string {
	if !exposed {
		return msg
	}
	return strings.Replace(msg, "without authentication", "with authentication", 1)
}

// errNoAuthentication is why serve refuses an address beyond loopback
// when nobody has to sign in.
func errNoAuthentication(addr string) error {
	return fmt.Errorf("refusing to listen on %s without authentication: anyone who can reach it could use Sova. "+
		"Create a user first (sova users add NAME --role admin; sign-in and API keys are then required), "+
		"or set SOVA_AUTH=none to let everyone who reaches the address in as the one local user (trusted networks only), "+
		"or SOVA_ANONYMOUS=true to let visitors in anonymously with per-address limits", addr)
}

// shareStore is the store of share links when they are on
// (SOVA_SHARE_LINKS), else nil: the server then answers them 404.
func shareStore(on bool, st sova.ShareStore) sova.ShareStore {
	if !on {
		return nil
	}
	return st
}
