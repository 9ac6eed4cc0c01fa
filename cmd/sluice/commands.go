package main

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/internal/admin"
)

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "sluice",
		Short:         "Sluice, a multi-tenant AI gateway",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(serveCmd("serve", "Serve the inference proxy, the admin API and the dashboard on one listener", partsAll),
		serveCmd("proxy", "Serve the inference proxy alone", partsProxy),
		serveCmd("admin", "Serve the admin API and the dashboard alone", partsAdmin),
		migrateCmd(), tokenCmd(), keysCmd(), exportCmd(), applyCmd(), backupCmd(), healthcheckCmd(), mockProviderCmd(), benchCmd(), benchPassthroughCmd(), versionCmd())
	return root
}

// parts selects what a serving process runs.
type parts struct{ proxy, admin bool }

var (
	partsAll   = parts{proxy: true, admin: true}
	partsProxy = parts{proxy: true}
	partsAdmin = parts{admin: true}
)

func serveCmd(name, short string, which parts) *cobra.Command {
	var c config
	cmd := &cobra.Command{Use: name, Short: short, Args: cobra.NoArgs}
	c.bindFlags(cmd.Flags())
	cmd.RunE = withConfig(&c, func(cmd *cobra.Command, _ []string) error {
		return serve(cmd.Context(), &c, which)
	})
	return cmd
}

func migrateCmd() *cobra.Command {
	var c config
	cmd := &cobra.Command{Use: "migrate", Short: "Apply the store's pending migrations and exit", Args: cobra.NoArgs}
	c.bindFlags(cmd.Flags())
	cmd.RunE = withConfig(&c, func(cmd *cobra.Command, _ []string) error {
		st, err := c.openStore(cmd.Context())
		if err != nil {
			return err
		}
		defer st.Close()
		fmt.Fprintln(cmd.OutOrStdout(), "migrations applied; store is up to date")
		if c.ClickHouseURL != "" {
			applied, err := migrateClickHouse(cmd.Context(), c.ClickHouseURL)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ClickHouse migrations applied (%d new); analytics schema is up to date\n", len(applied))
		}
		return nil
	})
	return cmd
}

func tokenCmd() *cobra.Command {
	root := &cobra.Command{Use: "token", Short: "Manage admin tokens (recovery)"}
	var c config
	var email, name string
	create := &cobra.Command{
		Use:   "create",
		Short: "Mint a user token for a user (e.g. to recover admin access) and print it once",
		Args:  cobra.NoArgs,
	}
	c.bindFlags(create.Flags())
	create.Flags().StringVar(&email, "user", "admin@localhost", "email of the user the token belongs to")
	create.Flags().StringVar(&name, "name", "cli", "name of the token")
	create.RunE = withConfig(&c, func(cmd *cobra.Command, _ []string) error {
		ctx := cmd.Context()
		svc, closeFn, err := openService(ctx, &c)
		if err != nil {
			return err
		}
		defer closeFn()
		secret, err := svc.MintUserToken(ctx, email, name)
		if err != nil {
			return err
		}
		fmt.Fprintln(cmd.OutOrStdout(), secret)
		return nil
	})
	root.AddCommand(create)
	return root
}

func keysCmd() *cobra.Command {
	root := &cobra.Command{Use: "keys", Short: "Manage the master key that seals provider keys"}
	var c config
	reseal := &cobra.Command{
		Use:   "reseal",
		Short: "Seal every provider key with the current master key (the last step of a rotation); prints counts, never keys",
		Long: "Seal every provider key with the current master key (SLUICE_MASTER_KEY, or the key file of the\n" +
			"embedded store). Keys sealed with the previous master key (SLUICE_MASTER_KEY_PREVIOUS or\n" +
			"--master-key-previous-file) are opened and sealed anew, in one transaction: if any key opens with\n" +
			"neither, nothing changes. Running it again changes nothing. See docs/security.md.",
		Args: cobra.NoArgs,
	}
	c.bindFlags(reseal.Flags())
	reseal.RunE = withConfig(&c, func(cmd *cobra.Command, _ []string) error {
		ctx := cmd.Context()
		svc, closeFn, err := openService(ctx, &c)
		if err != nil {
			return err
		}
		defer closeFn()
		rep, err := svc.Reseal(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "provider keys: %d, resealed with master key %s: %d, already under it: %d\n",
			rep.Total, rep.KeyID, rep.Resealed, rep.Current)
		return nil
	})
	root.AddCommand(reseal)
	return root
}

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use: "version", Short: "Print the version", Args: cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) { fmt.Fprintln(cmd.OutOrStdout(), "sluice", version) },
	}
}

// openService opens the store and the admin service on it, for the
// commands that run one admin operation (no proxy, no analytics).
func openService(ctx context.Context, c *config) (*admin.Service, func(), error) {
	log, err := c.logger()
	if err != nil {
		return nil, nil, err
	}
	box, err := c.box()
	if err != nil {
		return nil, nil, err
	}
	st, err := c.openStore(ctx)
	if err != nil {
		return nil, nil, err
	}
	svc, err := admin.New(admin.Config{Store: st, Box: box, Logger: log, AllowPrivateBaseURLs: c.AllowPrivateUpstream})
	if err != nil {
		_ = st.Close()
		return nil, nil, err
	}
	return svc, func() { _ = st.Close() }, nil
}

// listen opens the listener, with a clear error when the port is taken.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) {
			return nil, fmt.Errorf("listen on %s: %w (is another process using the port? set --listen)", addr, err)
		}
		return nil, err
	}
	return ln, nil
}
