package admin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/catalog"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/store"
)

// PriceInput is one model price of PUT /admin/v1/model-prices, in USD per
// million tokens.
type PriceInput struct {
	Provider           string    `json:"provider"`
	Model              string    `json:"model"`
	InputPerMTok       money.USD `json:"input_per_mtok"`
	OutputPerMTok      money.USD `json:"output_per_mtok"`
	CachedInputPerMTok money.USD `json:"cached_input_per_mtok"`
	// The cache-write prices and the long-context tier (CONTRACT §14);
	// absent is 0 (writes priced as input, one tier).
	CacheWritePerMTok          money.USD  `json:"cache_write_per_mtok"`
	CacheWrite1hPerMTok        money.USD  `json:"cache_write_1h_per_mtok"`
	LongContextThresholdTokens int64      `json:"long_context_threshold_tokens"`
	LongContextInputPerMTok    money.USD  `json:"long_context_input_per_mtok"`
	LongContextOutputPerMTok   money.USD  `json:"long_context_output_per_mtok"`
	DeprecatedAt               *time.Time `json:"deprecated_at"`
	SunsetAt                   *time.Time `json:"sunset_at"`
}

const (
	maxPricesPerPut = 1000
	// maxPricePerMTok is far above any list price; it catches unit mistakes
	// (a price per token entered per million, cents for dollars).
	maxPricePerMTok = 10_000 * money.PerDollar
	// metaPricesSeeded marks that the built-in price list was inserted once.
	metaPricesSeeded = "prices_seeded"
	// metaPriceTiersSeeded marks that the cache-write prices and
	// long-context tiers of the built-in list (CONTRACT §14) were filled
	// into the rows a first seeding inserted before they existed.
	metaPriceTiersSeeded = "price_tiers_seeded"
)

// Price sources.
const (
	PriceSourceSeed  = "seed"
	PriceSourceAdmin = "admin"
)

// ListModelPrices lists model prices ordered by provider and model; provider
// "" lists every provider's.
func (s *Service) ListModelPrices(ctx context.Context, p *auth.Principal, provider string, pg Page) (*List[store.ModelPrice], error) {
	if err := s.can(ctx, p, auth.OpModelPriceList); err != nil {
		return nil, err
	}
	pg, err := checkPage(pg)
	if err != nil {
		return nil, err
	}
	rows, next, err := store.ListModelPrices(ctx, s.db, provider, pg)
	if errors.Is(err, store.ErrBadCursor) {
		return nil, apierr.Invalid("cursor", "cursor is not valid")
	}
	if err != nil {
		return nil, err
	}
	out := &List[store.ModelPrice]{Data: rows, NextCursor: next}
	return out, nil
}

// maxLongContextThreshold is far above any context window; it catches a
// threshold entered in characters or bytes.
const maxLongContextThreshold = 100_000_000

// checkLongContext checks the long-context tier: a threshold within
// bounds, and tier prices only with a threshold (a tier without one would
// never apply, and would be a mistake the operator should hear of).
func checkLongContext(param func(string) string, in *PriceInput) error {
	if in.LongContextThresholdTokens < 0 || in.LongContextThresholdTokens > maxLongContextThreshold {
		return apierr.Invalid(param("long_context_threshold_tokens"), "long_context_threshold_tokens must be between 0 and %d", maxLongContextThreshold)
	}
	if in.LongContextThresholdTokens == 0 && (in.LongContextInputPerMTok != 0 || in.LongContextOutputPerMTok != 0) {
		return apierr.Invalid(param("long_context_threshold_tokens"), "long-context prices need long_context_threshold_tokens")
	}
	return nil
}

func checkPrice(i int, in *PriceInput) error {
	param := func(f string) string { return fmt.Sprintf("[%d].%s", i, f) }
	if _, ok := catalog.LookupProvider(in.Provider); !ok {
		return apierr.Invalid(param("provider"), "unknown provider %q", in.Provider)
	}
	if err := checkText(param("model"), in.Model, 256, true); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    money.USD
	}{{"input_per_mtok", in.InputPerMTok}, {"output_per_mtok", in.OutputPerMTok}, {"cached_input_per_mtok", in.CachedInputPerMTok},
		{"cache_write_per_mtok", in.CacheWritePerMTok}, {"cache_write_1h_per_mtok", in.CacheWrite1hPerMTok},
		{"long_context_input_per_mtok", in.LongContextInputPerMTok}, {"long_context_output_per_mtok", in.LongContextOutputPerMTok}} {
		if f.v < 0 || f.v > maxPricePerMTok {
			return apierr.Invalid(param(f.name), "%s must be between 0 and 10000 USD per million tokens", f.name)
		}
	}
	if err := checkLongContext(param, in); err != nil {
		return err
	}
	if in.DeprecatedAt != nil {
		t := in.DeprecatedAt.UTC().Truncate(time.Microsecond)
		in.DeprecatedAt = &t
	}
	if in.SunsetAt != nil {
		t := in.SunsetAt.UTC().Truncate(time.Microsecond)
		in.SunsetAt = &t
	}
	if in.DeprecatedAt != nil && in.SunsetAt != nil && !in.SunsetAt.After(*in.DeprecatedAt) {
		return apierr.Invalid(param("sunset_at"), "sunset_at must be after deprecated_at")
	}
	return nil
}

// PutModelPrices creates or replaces the prices given, all in one
// transaction and one audit entry. The proxy prices requests with them from
// its next snapshot; costs already logged keep the price they were served at.
func (s *Service) PutModelPrices(ctx context.Context, p *auth.Principal, in []PriceInput) (*List[store.ModelPrice], error) {
	if err := s.can(ctx, p, auth.OpModelPricePut); err != nil {
		return nil, err
	}
	if len(in) > maxPricesPerPut {
		return nil, apierr.Invalid("", "at most %d prices per request", maxPricesPerPut)
	}
	if len(in) == 0 {
		return &List[store.ModelPrice]{Data: []store.ModelPrice{}}, nil
	}
	now := s.now()
	rows := make([]store.ModelPrice, len(in))
	seen := make(map[[2]string]bool, len(in))
	pairs := make([]map[string]string, len(in))
	for i := range in {
		if err := checkPrice(i, &in[i]); err != nil {
			return nil, err
		}
		k := [2]string{in[i].Provider, in[i].Model}
		if seen[k] {
			return nil, apierr.Invalid(fmt.Sprintf("[%d].model", i), "%s/%s appears twice", k[0], k[1])
		}
		seen[k] = true
		rows[i] = store.ModelPrice{
			Provider: in[i].Provider, Model: in[i].Model,
			InputPerMTok: in[i].InputPerMTok, OutputPerMTok: in[i].OutputPerMTok, CachedInputPerMTok: in[i].CachedInputPerMTok,
			CacheWritePerMTok: in[i].CacheWritePerMTok, CacheWrite1hPerMTok: in[i].CacheWrite1hPerMTok,
			LongContextThresholdTokens: in[i].LongContextThresholdTokens,
			LongContextInputPerMTok:    in[i].LongContextInputPerMTok, LongContextOutputPerMTok: in[i].LongContextOutputPerMTok,
			DeprecatedAt: in[i].DeprecatedAt, SunsetAt: in[i].SunsetAt, Source: PriceSourceAdmin, UpdatedAt: now,
		}
		pairs[i] = map[string]string{"provider": in[i].Provider, "model": in[i].Model}
	}
	c := &change{Action: "model_price.put", ResourceType: "model_price", Config: true, Changes: store.Changes{"prices": pairs}}
	err := s.write(ctx, p, c, func(tx bun.Tx) error {
		return store.UpsertModelPrices(ctx, tx, rows)
	})
	if err != nil {
		return nil, err
	}
	return &List[store.ModelPrice]{Data: rows}, nil
}

// DeleteModelPrice removes the price of a model; its requests then cost 0
// and are flagged unpriced.
func (s *Service) DeleteModelPrice(ctx context.Context, p *auth.Principal, provider, model string) error {
	if err := s.can(ctx, p, auth.OpModelPriceDelete); err != nil {
		return err
	}
	mp, err := store.Get[store.ModelPrice](ctx, s.db, store.Eq("provider", provider), store.Eq("model", model))
	if err != nil {
		return notFound(err, "model price")
	}
	c := &change{Action: "model_price.delete", ResourceType: "model_price", ResourceID: mp.Provider + "/" + mp.Model, Config: true,
		Changes: store.Changes{"provider": mp.Provider, "model": mp.Model}}
	return s.write(ctx, p, c, func(tx bun.Tx) error {
		n, err := store.Delete[store.ModelPrice](ctx, tx, store.Eq("provider", provider), store.Eq("model", model))
		if err == nil && n == 0 {
			return apierr.NotFound("model price") // deleted concurrently
		}
		return err
	})
}

// seedRows is the built-in price list as rows of source "seed".
func seedRows(now time.Time) []store.ModelPrice {
	seed := catalog.Prices()
	rows := make([]store.ModelPrice, 0, len(seed))
	for _, sp := range seed {
		rows = append(rows, store.ModelPrice{
			Provider: sp.Provider, Model: sp.Model,
			InputPerMTok: money.FromFloat(sp.InputPerMTok), OutputPerMTok: money.FromFloat(sp.OutputPerMTok),
			CachedInputPerMTok: money.FromFloat(sp.CachedInputPerMTok),
			CacheWritePerMTok:  money.FromFloat(sp.CacheWritePerMTok), CacheWrite1hPerMTok: money.FromFloat(sp.CacheWrite1hPerMTok),
			LongContextThresholdTokens: sp.LongContextThresholdTokens,
			LongContextInputPerMTok:    money.FromFloat(sp.LongContextInputPerMTok),
			LongContextOutputPerMTok:   money.FromFloat(sp.LongContextOutputPerMTok),
			DeprecatedAt:               sp.DeprecatedAt, SunsetAt: sp.SunsetAt, Source: PriceSourceSeed, UpdatedAt: now,
		})
	}
	return rows
}

// SeedPrices inserts the built-in price list (catalog.Prices) the first
// time it runs on a store, with source "seed", and returns how many rows it
// inserted (or, on a store seeded before the cache-write prices and
// long-context tiers existed, how many seed rows it gave them, once). It
// records that in the meta table, so later starts change nothing: an
// operator's deletions and changes stick. Prices an operator set before
// the first seeding are kept.
func (s *Service) SeedPrices(ctx context.Context) (int, error) {
	var changed int
	err := s.st.InTx(ctx, func(tx bun.Tx) error {
		_, seeded, err := s.st.Meta(ctx, tx, metaPricesSeeded)
		if err != nil {
			return err
		}
		_, tiered, err := s.st.Meta(ctx, tx, metaPriceTiersSeeded)
		if err != nil || seeded && tiered {
			return err
		}
		now := s.now()
		rows := seedRows(now)
		if !seeded {
			changed, err = store.InsertMissingModelPrices(ctx, tx, rows)
		} else {
			changed, err = store.FillSeedPriceTiers(ctx, tx, rows)
		}
		if err != nil {
			return err
		}
		for _, key := range []string{metaPricesSeeded, metaPriceTiersSeeded} {
			if err := s.st.SetMeta(ctx, tx, key, now.Format(time.RFC3339)); err != nil {
				return fmt.Errorf("mark %s: %w", key, err)
			}
		}
		if changed > 0 {
			return s.st.BumpConfigVersion(ctx, tx)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("seed model prices: %w", err)
	}
	if changed > 0 && s.cfg.OnChange != nil {
		s.cfg.OnChange()
	}
	return changed, nil
}
