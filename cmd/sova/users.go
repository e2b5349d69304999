package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/auth"
	"github.com/sova-ai/sova/internal/store"
)

// withAccounts opens only the store, for the users and keys commands.
func withAccounts(ctx context.Context, fn func(store.Store) error) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	st, err := store.Open(ctx, cfg.DatabaseURL, cfg.DataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(st)
}

func newUsers() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "users",
		Short: "Manage accounts: who may sign in, with which role",
		Long: `Accounts are the people who use this Sova. Once one exists, every request
must sign in (the browser UI's form) or carry an API key (sova keys create);
before that, Sova on loopback serves one local user with no sign-in.

Roles: admin (no limits), pro (no daily message limit), free (the daily
limits of SOVA_LIMIT_FREE_*). Passwords are kept as argon2id hashes.`,
		Example: `  sova users add ann --role admin
  echo "$PASSWORD" | sova users add bob --role free --password-stdin
  sova users list
  sova users passwd bob
  sova users rm bob
  sova users usage --days 30`,
	}
	cmd.AddCommand(usersAdd(), usersList(), usersRemove(), usersPasswd(), usersUsage())
	return cmd
}

// readPassword is the password from stdin (--password-stdin: the first
// line) or a new random one, and whether it was generated.
func readPassword(cmd *cobra.Command, fromStdin bool) (string, bool, error) {
	if fromStdin {
		line, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", false, err
		}
		return strings.TrimRight(line, "\r\n"), false, nil
	}
	var b [15]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", false, err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), true, nil
}

// validName accepts 1–64 letters, digits and . _ - @.
func validName(name string) error {
	if name == "" || len(name) > 64 {
		return errors.New("a user name has 1 to 64 characters")
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-@", r)) {
			return fmt.Errorf("a user name may use letters, digits and . _ - @ only, not %q", r)
		}
	}
	return nil
}

func usersAdd() *cobra.Command {
	var role string
	var fromStdin bool
	cmd := &cobra.Command{
		Use:   "add NAME",
		Short: "Add an account; prints a one-time password unless --password-stdin",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := validName(args[0]); err != nil {
				return err
			}
			if !sova.ValidRole(role) {
				return fmt.Errorf("--role %q: use admin, pro or free", role)
			}
			pw, generated, err := readPassword(cmd, fromStdin)
			if err != nil {
				return err
			}
			hash, err := auth.HashPassword(pw)
			if err != nil {
				return err
			}
			return withAccounts(cmd.Context(), func(st store.Store) error {
				a := &sova.Account{Name: args[0], Role: role, PasswordHash: hash}
				if err := st.CreateAccount(cmd.Context(), a); errors.Is(err, sova.ErrConflict) {
					return fmt.Errorf("a user named %s already exists", args[0])
				} else if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				fmt.Fprintf(out, "added %s (%s, id %s)\n", a.Name, a.Role, a.ID)
				if generated {
					fmt.Fprintf(out, "password: %s\n(shown once; change it with: sova users passwd %s)\n", pw, a.Name)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&role, "role", sova.RoleFree, "admin, pro or free")
	cmd.Flags().BoolVar(&fromStdin, "password-stdin", false, "read the password from the first line of stdin")
	return cmd
}

func usersList() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the accounts",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withAccounts(cmd.Context(), func(st store.Store) error {
				list, err := st.ListAccounts(cmd.Context())
				if err != nil {
					return err
				}
				if len(list) == 0 {
					fmt.Fprintln(cmd.OutOrStdout(), "no users yet; add one with: sova users add NAME --role admin")
					return nil
				}
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tROLE\tCREATED\tSTATE\tID")
				for _, a := range list {
					state := "active"
					if a.Disabled {
						state = "disabled"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.Name, a.Role, a.CreatedAt.Local().Format(time.DateTime), state, a.ID)
				}
				return tw.Flush()
			})
		},
	}
}

func usersRemove() *cobra.Command {
	return &cobra.Command{
		Use:   "rm NAME",
		Short: "Remove an account with its sessions and API keys",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withAccounts(cmd.Context(), func(st store.Store) error {
				a, err := st.GetAccountByName(cmd.Context(), args[0])
				if err != nil {
					return fmt.Errorf("user %s: %w", args[0], err)
				}
				if err := st.DeleteAccount(cmd.Context(), a.ID); err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), "removed", a.Name)
				return nil
			})
		},
	}
}

func usersPasswd() *cobra.Command {
	var fromStdin bool
	cmd := &cobra.Command{
		Use:   "passwd NAME",
		Short: "Set a new password (prints a one-time one unless --password-stdin); signs the user out everywhere",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pw, generated, err := readPassword(cmd, fromStdin)
			if err != nil {
				return err
			}
			hash, err := auth.HashPassword(pw)
			if err != nil {
				return err
			}
			return withAccounts(cmd.Context(), func(st store.Store) error {
				a, err := st.GetAccountByName(cmd.Context(), args[0])
				if err != nil {
					return fmt.Errorf("user %s: %w", args[0], err)
				}
				if err := st.SetPassword(cmd.Context(), a.ID, hash); err != nil {
					return err
				}
				if _, err := st.DeleteSessions(cmd.Context(), a.ID); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "new password set for %s; their sessions ended\n", a.Name)
				if generated {
					fmt.Fprintf(cmd.OutOrStdout(), "password: %s\n(shown once)\n", pw)
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&fromStdin, "password-stdin", false, "read the password from the first line of stdin")
	return cmd
}

func newKeys() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Manage API keys (Authorization: Bearer sova_…)",
		Long: `An API key lets a program act for a user: send it as
"Authorization: Bearer sova_…" to /api/* and /v1/* (the OpenAI SDKs send
their api_key that way). A key is shown once, when it is created; Sova
keeps only its SHA-256 hash and its first characters, for listing.`,
		Example: `  sova keys create --user ann
  sova keys list --user ann
  sova keys revoke sova_AbCdEfGh`,
	}
	cmd.AddCommand(keysCreate(), keysList(), keysRevoke())
	return cmd
}

func keysCreate() *cobra.Command {
	var user string
	cmd := &cobra.Command{
		Use:   "create --user NAME",
		Short: "Create an API key for a user; prints it once",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if user == "" {
				return errors.New("--user NAME is required")
			}
			return withAccounts(cmd.Context(), func(st store.Store) error {
				a, err := st.GetAccountByName(cmd.Context(), user)
				if err != nil {
					return fmt.Errorf("user %s: %w", user, err)
				}
				key, prefix, hash, err := auth.NewAPIKey()
				if err != nil {
					return err
				}
				k := &sova.APIKey{UserID: a.ID, Prefix: prefix, Hash: hash}
				if err := st.CreateAPIKey(cmd.Context(), k); err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), key)
				fmt.Fprintf(cmd.ErrOrStderr(), "API key %s for %s (id %s): shown once, keep it now\n", prefix, a.Name, k.ID)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&user, "user", "", "the user the key acts for")
	return cmd
}

func keysList() *cobra.Command {
	var user string
	cmd := &cobra.Command{
		Use:   "list [--user NAME]",
		Short: "List API keys: prefix, user, created, last used",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withAccounts(cmd.Context(), func(st store.Store) error {
				ctx := cmd.Context()
				userID := ""
				if user != "" {
					a, err := st.GetAccountByName(ctx, user)
					if err != nil {
						return fmt.Errorf("user %s: %w", user, err)
					}
					userID = a.ID
				}
				keys, err := st.ListAPIKeys(ctx, userID)
				if err != nil {
					return err
				}
				names := map[string]string{}
				if accs, err := st.ListAccounts(ctx); err == nil {
					for _, a := range accs {
						names[a.ID] = a.Name
					}
				}
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "PREFIX\tUSER\tCREATED\tLAST USED\tSTATE\tID")
				for _, k := range keys {
					used, state := "never", "active"
					if !k.LastUsedAt.IsZero() {
						used = k.LastUsedAt.Local().Format(time.DateTime)
					}
					if !k.RevokedAt.IsZero() {
						state = "revoked " + k.RevokedAt.Local().Format(time.DateTime)
					}
					fmt.Fprintf(tw, "%s…\t%s\t%s\t%s\t%s\t%s\n", k.Prefix, names[k.UserID], k.CreatedAt.Local().Format(time.DateTime), used, state, k.ID)
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().StringVar(&user, "user", "", "only this user's keys")
	return cmd
}

func keysRevoke() *cobra.Command {
	return &cobra.Command{
		Use:   "revoke PREFIX|ID",
		Short: "Revoke an API key, named by its prefix (sova_XXXXXXXX) or id",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			want := strings.TrimSuffix(args[0], "…")
			return withAccounts(cmd.Context(), func(st store.Store) error {
				keys, err := st.ListAPIKeys(cmd.Context(), "")
				if err != nil {
					return err
				}
				var match []sova.APIKey
				for _, k := range keys {
					if k.ID == want || k.Prefix == want {
						match = append(match, k)
					}
				}
				switch len(match) {
				case 0:
					return fmt.Errorf("no API key with prefix or id %s (see sova keys list)", want)
				case 1:
				default:
					return fmt.Errorf("%d keys have the prefix %s: revoke one by its id (sova keys list)", len(match), want)
				}
				if err := st.RevokeAPIKey(cmd.Context(), match[0].ID); err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), "revoked", match[0].Prefix+"…", match[0].ID)
				return nil
			})
		},
	}
}
