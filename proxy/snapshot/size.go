package snapshot

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/internal/store"
)

// DefaultMaxRows bounds the configuration a proxy loads: tenants,
// gateways, provider keys, rules, active users, gateway assignments,
// inference tokens and model prices, counted together. Each of these rows
// is bounded in size where it is written (admin), so the bound on rows
// bounds the memory every proxy spends on its snapshot.
const DefaultMaxRows = 5_000_000

// ErrTooLarge is the error of a configuration refused because it has more
// rows than the limit: the snapshot in service stays.
var ErrTooLarge = errors.New("the configuration is larger than the snapshot limit")

// CheckSize counts the rows a snapshot of st would load, in one read-only
// transaction and before any is read, and refuses more than maxRows of
// them with ErrTooLarge. The Holder runs it before each build.
func CheckSize(ctx context.Context, st *store.Store, maxRows int) error {
	tx, err := st.DB.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("begin configuration count: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only: there is nothing to keep or lose

	// The conditions are read's: the rows Build would keep.
	counts := []func() (int, error){
		func() (int, error) { return store.Count[store.Tenant](ctx, tx) },
		func() (int, error) { return store.Count[store.Gateway](ctx, tx) },
		func() (int, error) { return store.Count[store.ProviderKey](ctx, tx) },
		func() (int, error) { return store.Count[store.Rule](ctx, tx) },
		func() (int, error) { return store.Count[store.User](ctx, tx, store.Eq("status", store.UserActive)) },
		func() (int, error) { return store.Count[store.UserGateway](ctx, tx) },
		func() (int, error) {
			return store.Count[store.Token](ctx, tx, store.In("kind", []string{store.TokenGateway, store.TokenUser, store.TokenPlayground}))
		},
		func() (int, error) { return store.Count[store.ModelPrice](ctx, tx) },
	}
	total := 0
	for _, count := range counts {
		n, err := count()
		if err != nil {
			return fmt.Errorf("count configuration rows: %w", err)
		}
		if total += n; total > maxRows {
			return fmt.Errorf("%w: more than %d rows (SLUICE_SNAPSHOT_MAX_ROWS)", ErrTooLarge, maxRows)
		}
	}
	return nil
}
