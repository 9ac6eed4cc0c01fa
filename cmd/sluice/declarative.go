package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/internal/declarative"
)

// clientFlags are the flags export and apply share: the admin API they
// talk to. The token is read from SLUICE_TOKEN only, never a flag, so it
// does not show in process listings.
type clientFlags struct{ server string }

func (f *clientFlags) bind(cmd *cobra.Command) {
	def := os.Getenv("SLUICE_SERVER")
	if def == "" {
		def = "http://localhost:8080"
	}
	cmd.Flags().StringVar(&f.server, "server", def, "base URL of the admin API (env SLUICE_SERVER); the token is read from SLUICE_TOKEN")
}

func (f *clientFlags) client() (*declarative.Client, error) {
	return declarative.NewClient(f.server, os.Getenv("SLUICE_TOKEN"))
}

func exportCmd() *cobra.Command {
	var cf clientFlags
	var tenant, out string
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write the configuration the caller may read as YAML (key values, webhook secrets, token secrets and passwords never)",
		Long: "Write the configuration the caller may read — tenants (an alert webhook's secret as\n" +
			"alert_webhook_secret_ref), gateways, provider keys (as key_ref), rules, users, gateway\n" +
			"assignments, token metadata and model prices — as YAML, through the admin API with the\n" +
			"token in SLUICE_TOKEN. See docs/configuration.md.",
		Args: cobra.NoArgs,
	}
	cf.bind(cmd)
	cmd.Flags().StringVar(&tenant, "tenant", "", "export only this tenant")
	cmd.Flags().StringVarP(&out, "output", "o", "", "file to write (default: standard output)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		c, err := cf.client()
		if err != nil {
			return err
		}
		root, err := declarative.Export(cmd.Context(), c, tenant, cmd.ErrOrStderr())
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		data, err := declarative.Marshal(root)
		if err != nil {
			return err
		}
		if out == "" {
			_, err = cmd.OutOrStdout().Write(data)
			return err
		}
		if err := os.WriteFile(out, data, 0o644); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		return nil
	}
	return cmd
}

func applyCmd() *cobra.Command {
	var cf clientFlags
	var file string
	var opt declarative.Options
	cmd := &cobra.Command{
		Use:   "apply",
		Short: "Make the server match a configuration file: print the plan, then carry it out",
		Long: "Make the server match a configuration file (see `sluice export`): read the server's state of\n" +
			"the tenants the file names, print the plan (create, update, replace, delete, with the fields),\n" +
			"then carry it out through the admin API with the token in SLUICE_TOKEN. Applying the same file\n" +
			"twice changes nothing the second time. See docs/configuration.md.",
		Args: cobra.NoArgs,
	}
	cf.bind(cmd)
	cmd.Flags().StringVarP(&file, "file", "f", "", "configuration file (YAML) to apply (required)")
	cmd.Flags().BoolVar(&opt.DryRun, "dry-run", false, "print the plan and change nothing")
	cmd.Flags().BoolVar(&opt.Prune, "prune", false, "also delete objects the file does not name, within the tenants it names")
	cmd.Flags().StringVar(&opt.SecretsOut, "secrets-out", "", "file (mode 0600) the secrets of created tokens are appended to")
	_ = cmd.MarkFlagRequired("file")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		c, err := cf.client()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("apply: %w", err)
		}
		root, err := declarative.Parse(data)
		if err != nil {
			return fmt.Errorf("apply: %s: %w", file, err)
		}
		var plan bytes.Buffer
		opt.Plan = &plan
		_, err = declarative.Apply(cmd.Context(), c, root, opt)
		_, _ = cmd.OutOrStdout().Write(plan.Bytes())
		if err != nil {
			return fmt.Errorf("apply: %w", err)
		}
		if opt.DryRun {
			fmt.Fprintln(cmd.OutOrStdout(), "Dry run: nothing was changed.")
		}
		return nil
	}
	return cmd
}
