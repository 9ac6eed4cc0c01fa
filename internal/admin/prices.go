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
	Provider           string     `json:"provider"`
	Model              string     `json:"model"`
	InputPerMTok       money.USD  `json:"input_per_mtok"`
	OutputPerMTok      money.USD  `json:"output_per_mtok"`
	CachedInputPerMTok money.USD  `json:"cached_input_per_mtok"`
	DeprecatedAt       *time.Time `json:"deprecated_at"`
	SunsetAt           *time.Time `json:"sunset_at"`
}

const (
	maxPricesPerPut = 1000
	// maxPricePerMTok is far above any list price; it catches unit mistakes
	// (a price per token entered per million, cents for dollars).
	maxPricePerMTok = 10_000 * money.PerDollar
	// metaPricesSeeded marks that the built-in price list was inserted once.
	metaPricesSeeded = "prices_seeded"
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
	}{{"input_per_mtok", in.InputPerMTok}, {"output_per_mtok", in.OutputPerMTok}, {"cached_input_per_mtok", in.CachedInputPerMTok}} {
		if f.v < 0 || f.v > maxPricePerMTok {
			return apierr.Invalid(param(f.name), "%s must be between 0 and 10000 USD per million tokens", f.name)
		}
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

// SeedPrices inserts the built-in price list (catalog.Prices) the first
// time it runs on a store, with source "seed", and returns how many rows it
// inserted. It records that in the meta table, so later starts insert
// nothing: an operator's deletions and changes stick. Prices an operator
// set before the first seeding are kept.
func (s *Service) SeedPrices(ctx context.Context) (int, error) {
	var inserted int
	err := s.st.InTx(ctx, func(tx bun.Tx) error {
		if _, done, err := s.st.Meta(ctx, tx, metaPricesSeeded); err != nil || done {
			return err
		}
		now := s.now()
		seed := catalog.Prices()
		rows := make([]store.ModelPrice, 0, len(seed))
		for _, sp := range seed {
			rows = append(rows, store.ModelPrice{
				Provider: sp.Provider, Model: sp.Model,
				InputPerMTok: money.FromFloat(sp.InputPerMTok), OutputPerMTok: money.FromFloat(sp.OutputPerMTok),
				CachedInputPerMTok: money.FromFloat(sp.CachedInputPerMTok),
				DeprecatedAt:       sp.DeprecatedAt, SunsetAt: sp.SunsetAt, Source: PriceSourceSeed, UpdatedAt: now,
			})
		}
		if len(rows) > 0 {
			n, err := store.InsertMissingModelPrices(ctx, tx, rows)
			if err != nil {
				return err
			}
			inserted = n
		}
		if err := s.st.SetMeta(ctx, tx, metaPricesSeeded, now.Format(time.RFC3339)); err != nil {
			return fmt.Errorf("mark prices seeded: %w", err)
		}
		if inserted > 0 {
			return s.st.BumpConfigVersion(ctx, tx)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("seed model prices: %w", err)
	}
	if inserted > 0 && s.cfg.OnChange != nil {
		s.cfg.OnChange()
	}
	return inserted, nil
}
