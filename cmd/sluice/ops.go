package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/analytics/embedded"
	"github.com/sluicehq/sluice/internal/store"
)

// backupCmd is `sluice backup`: an online copy of the embedded stores.
func backupCmd() *cobra.Command {
	var c config
	var out string
	cmd := &cobra.Command{
		Use:   "backup",
		Short: "Copy the embedded stores (SQLite) of the data dir to a new directory, online; prints what it wrote",
		Long: "Copy the embedded relational store (sluice.db), the embedded analytics store (analytics.db) and the\n" +
			"master key file of the data dir into --out, a directory that must not hold them yet. The copies are\n" +
			"consistent and taken while a server runs. A store in PostgreSQL or ClickHouse is skipped: back those\n" +
			"up with pg_dump and ClickHouse's own tools (docs/deployment.md). To restore, stop the server and put\n" +
			"the files back in its data dir.",
		Args: cobra.NoArgs,
	}
	c.bindFlags(cmd.Flags())
	cmd.Flags().StringVar(&out, "out", "", "directory to write the backup into (created owner-only)")
	cmd.RunE = withConfig(&c, func(cmd *cobra.Command, _ []string) error {
		if out == "" {
			return errors.New("--out is required")
		}
		wrote, err := backup(cmd.Context(), &c, out)
		for _, f := range wrote {
			fmt.Fprintln(cmd.OutOrStdout(), "wrote", f)
		}
		return err
	})
	return cmd
}

// backup writes the embedded stores of c into dir and returns the files
// written. Neither store is migrated: a backup is what the server has.
func backup(ctx context.Context, c *config, dir string) ([]string, error) {
	if c.DatabaseURL != "" && c.ClickHouseURL != "" {
		return nil, errors.New("no embedded store to back up: use pg_dump for PostgreSQL and ClickHouse's own backups (docs/deployment.md)")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create backup dir: %w", err)
	}
	var wrote []string
	if c.DatabaseURL == "" {
		if _, err := os.Stat(filepath.Join(c.DataDir, "sluice.db")); err != nil {
			return nil, fmt.Errorf("no embedded store in the data dir %s: %w", c.DataDir, err)
		}
		st, err := store.Open(ctx, store.Config{DataDir: c.DataDir})
		if err != nil {
			return nil, err
		}
		path := filepath.Join(dir, "sluice.db")
		err = errors.Join(st.BackupTo(ctx, path), st.Close())
		if err != nil {
			return wrote, fmt.Errorf("back up the relational store: %w", err)
		}
		wrote = append(wrote, path)
		// Without its master key the copy's provider keys cannot be opened.
		if key, err := copyKeyFile(filepath.Join(c.DataDir, "master.key"), filepath.Join(dir, "master.key")); err != nil {
			return wrote, err
		} else if key != "" {
			wrote = append(wrote, key)
		}
	}
	if c.ClickHouseURL == "" {
		src := filepath.Join(c.DataDir, "analytics.db")
		if _, err := os.Stat(src); err == nil {
			st, err := embedded.Open(ctx, src)
			if err != nil {
				return wrote, err
			}
			path := filepath.Join(dir, "analytics.db")
			if err := errors.Join(st.BackupTo(ctx, path), st.Close()); err != nil {
				return wrote, fmt.Errorf("back up the analytics store: %w", err)
			}
			wrote = append(wrote, path)
		}
	}
	return wrote, nil
}

// copyKeyFile copies the master key file src to dst (owner-only, not
// overwriting) and returns dst, or "" when there is no src.
func copyKeyFile(src, dst string) (string, error) {
	data, err := os.ReadFile(src)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the master key file: %w", err)
	}
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("write the master key file: %w", err)
	}
	_, err = f.Write(data)
	if err := errors.Join(err, f.Close()); err != nil {
		return "", fmt.Errorf("write the master key file: %w", err)
	}
	return dst, nil
}

// healthcheckCmd is `sluice healthcheck`: the probe of an image without a
// shell or curl (compose healthchecks, docker HEALTHCHECK).
func healthcheckCmd() *cobra.Command {
	var listen string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "healthcheck",
		Short: "GET /healthz of the server on this host's --listen port; exit 0 when it answers 200",
		Args:  cobra.NoArgs,
	}
	cmd.Flags().StringVar(&listen, "listen", ":8080", "the server's listen address (SLUICE_LISTEN); an empty or wildcard host is 127.0.0.1")
	cmd.Flags().DurationVar(&timeout, "timeout", 3*time.Second, "how long to wait for the answer")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := applyEnv(cmd.Flags()); err != nil {
			return err
		}
		u, err := healthURL(listen)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return fmt.Errorf("healthcheck: %w", err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		fmt.Fprintf(cmd.OutOrStdout(), "%d %s\n", resp.StatusCode, body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("healthcheck: %s answered %d", u, resp.StatusCode)
		}
		return nil
	}
	return cmd
}

// healthURL is the /healthz URL of a server listening on listen.
func healthURL(listen string) (string, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("listen address %q: %w", listen, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/healthz", nil
}
