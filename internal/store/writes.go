package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// CountClientError counts one more report of the client error with
// fingerprint, seen at now, and returns its id; found is false when no
// such error is stored yet (the caller inserts it).
func CountClientError(ctx context.Context, db bun.IDB, fingerprint string, now time.Time) (id string, found bool, err error) {
	err = db.NewUpdate().Table("client_errors").
		Set("? = ? + 1", bun.Ident("count"), bun.Ident("count")).
		Set("last_seen_at = ?", now).
		Where("fingerprint = ?", fingerprint).
		Returning("id").Scan(ctx, &id)
	switch {
	case err == nil:
		return id, true, nil
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	}
	return "", false, fmt.Errorf("count client error: %w", err)
}

// DeleteExpiredTokens deletes the tokens of kind held by userID that
// expired at or before now; with strict, only those that expired before
// now.
func DeleteExpiredTokens(ctx context.Context, db bun.IDB, userID, kind string, now time.Time, strict bool) error {
	op := "expires_at <= ?"
	if strict {
		op = "expires_at < ?"
	}
	_, err := db.NewDelete().Model((*Token)(nil)).
		Where("user_id = ?", userID).Where("kind = ?", kind).Where(op, now).Exec(ctx)
	if err != nil {
		return fmt.Errorf("delete expired %s tokens: %w", kind, err)
	}
	return nil
}

// AssignGateway inserts ug unless the user already has the gateway: it is
// idempotent.
func AssignGateway(ctx context.Context, db bun.IDB, ug *UserGateway) error {
	if _, err := db.NewInsert().Model(ug).On("CONFLICT DO NOTHING").Exec(ctx); err != nil {
		return fmt.Errorf("assign gateway %s to user %s: %w", ug.GatewayID, ug.UserID, err)
	}
	return nil
}

// UpsertModelPrices writes rows, replacing every priced column of a price
// already stored for the same provider and model.
func UpsertModelPrices(ctx context.Context, db bun.IDB, rows []ModelPrice) error {
	_, err := db.NewInsert().Model(&rows).
		On("CONFLICT (provider, model) DO UPDATE").
		Set("input_per_mtok = EXCLUDED.input_per_mtok").
		Set("output_per_mtok = EXCLUDED.output_per_mtok").
		Set("cached_input_per_mtok = EXCLUDED.cached_input_per_mtok").
		Set("cache_write_per_mtok = EXCLUDED.cache_write_per_mtok").
		Set("cache_write_1h_per_mtok = EXCLUDED.cache_write_1h_per_mtok").
		Set("long_context_threshold_tokens = EXCLUDED.long_context_threshold_tokens").
		Set("long_context_input_per_mtok = EXCLUDED.long_context_input_per_mtok").
		Set("long_context_output_per_mtok = EXCLUDED.long_context_output_per_mtok").
		Set("deprecated_at = EXCLUDED.deprecated_at").
		Set("sunset_at = EXCLUDED.sunset_at").
		Set("source = EXCLUDED.source").
		Set("updated_at = EXCLUDED.updated_at").
		Exec(ctx)
	if err != nil {
		return fmt.Errorf("upsert %d model prices: %w", len(rows), err)
	}
	return nil
}

// FillSeedPriceTiers gives the rows still as seeded (source "seed", no
// cache-write price and no long-context tier yet) the cache-write prices
// and long-context tier of rows, and returns how many it changed. Rows an
// operator changed (source "admin") are left alone.
func FillSeedPriceTiers(ctx context.Context, db bun.IDB, rows []ModelPrice) (int, error) {
	var n int64
	for i := range rows {
		r := &rows[i]
		if r.CacheWritePerMTok == 0 && r.CacheWrite1hPerMTok == 0 && r.LongContextThresholdTokens == 0 {
			continue
		}
		res, err := db.NewUpdate().Model((*ModelPrice)(nil)).
			Set("cache_write_per_mtok = ?", r.CacheWritePerMTok).
			Set("cache_write_1h_per_mtok = ?", r.CacheWrite1hPerMTok).
			Set("long_context_threshold_tokens = ?", r.LongContextThresholdTokens).
			Set("long_context_input_per_mtok = ?", r.LongContextInputPerMTok).
			Set("long_context_output_per_mtok = ?", r.LongContextOutputPerMTok).
			Set("updated_at = ?", r.UpdatedAt).
			Where("provider = ? AND model = ? AND source = 'seed'", r.Provider, r.Model).
			Where("cache_write_per_mtok = 0 AND cache_write_1h_per_mtok = 0 AND long_context_threshold_tokens = 0").
			Exec(ctx)
		if err != nil {
			return 0, fmt.Errorf("fill price tiers of %s/%s: %w", r.Provider, r.Model, err)
		}
		k, _ := res.RowsAffected()
		n += k
	}
	return int(n), nil
}

// InsertMissingModelPrices inserts the rows whose provider and model have
// no price yet, keeping those stored, and returns how many it inserted.
func InsertMissingModelPrices(ctx context.Context, db bun.IDB, rows []ModelPrice) (int, error) {
	res, err := db.NewInsert().Model(&rows).On("CONFLICT (provider, model) DO NOTHING").Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("insert %d model prices: %w", len(rows), err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// TokenUse is one token's last use, and its user's ("" for a token
// without one), as TouchTokens writes it.
type TokenUse struct {
	TokenID, UserID string
	At              time.Time
}

// TouchTokens writes the tokens' last_used_at and their users'
// last_seen_at in one transaction of two batched UPDATEs (one statement
// per table, a CASE over the ids). A user of several tokens is seen at
// the latest of their uses.
func TouchTokens(ctx context.Context, s *Store, uses []TokenUse) error {
	if len(uses) == 0 {
		return nil
	}
	tokens := make(map[string]time.Time, len(uses))
	users := map[string]time.Time{}
	for _, u := range uses {
		tokens[u.TokenID] = u.At
		if u.UserID != "" && u.At.After(users[u.UserID]) {
			users[u.UserID] = u.At
		}
	}
	err := s.InTx(ctx, func(tx bun.Tx) error {
		if err := touch(ctx, tx, s.postgres, "tokens", "last_used_at", tokens); err != nil {
			return err
		}
		return touch(ctx, tx, s.postgres, "users", "last_seen_at", users)
	})
	if err != nil {
		return fmt.Errorf("record token use: %w", err)
	}
	return nil
}

// touch sets column of table to at[id] on the rows with those ids, in
// one UPDATE.
func touch(ctx context.Context, tx bun.Tx, postgres bool, table, column string, at map[string]time.Time) error {
	if len(at) == 0 {
		return nil
	}
	// PostgreSQL types a CASE of bare literals as text; SQLite stores
	// times as text already (a cast to TIMESTAMPTZ would make them numbers).
	then := "?"
	if postgres {
		then = "CAST(? AS TIMESTAMPTZ)"
	}
	expr := "CASE id"
	args := append(make([]any, 0, 1+2*len(at)), bun.Ident(column))
	ids := make([]string, 0, len(at))
	for id, t := range at {
		expr += " WHEN ? THEN " + then
		args = append(args, id, t.UTC())
		ids = append(ids, id)
	}
	expr += " END"
	_, err := tx.NewUpdate().Table(table).Set("? = "+expr, args...).
		Where("id IN (?)", bun.In(ids)).Exec(ctx)
	if err != nil {
		return fmt.Errorf("update %s.%s: %w", table, column, err)
	}
	return nil
}
