package admin

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/catalog"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/store"
)

func TestSeedPrices(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		v0, err := s.st.ConfigVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n, err := s.SeedPrices(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := len(catalog.Prices()); n != want || n == 0 {
			t.Fatalf("seeded %d, want %d", n, want)
		}
		if v1, _ := s.st.ConfigVersion(ctx); v1 != v0+1 {
			t.Fatalf("config version %d after seeding, want %d", v1, v0+1)
		}
		mp, err := store.Get[store.ModelPrice](ctx, s.db, store.Eq("provider", "openai"), store.Eq("model", "gpt-4o"))
		if err != nil {
			t.Fatal(err)
		}
		if mp.Source != "seed" || mp.InputPerMTok <= 0 {
			t.Fatalf("got %+v, want a seeded price", mp)
		}
		if err := s.DeleteModelPrice(ctx, admin, "openai", "gpt-4o"); err != nil {
			t.Fatal(err)
		}
		n, err = s.SeedPrices(ctx)
		if err != nil || n != 0 {
			t.Fatalf("second seeding: %d %v, want 0", n, err)
		}
		if ok, _ := store.Exists[store.ModelPrice](ctx, s.db, store.Eq("provider", "openai"), store.Eq("model", "gpt-4o")); ok {
			t.Fatal("a deleted seed price came back")
		}
		total, _ := store.Count[store.ModelPrice](ctx, s.db)
		if total != len(catalog.Prices())-1 {
			t.Fatalf("%d prices, want %d", total, len(catalog.Prices())-1)
		}

		// Paging walks every row once, in (provider, model) order.
		var seen []string
		pg := Page{Limit: 7}
		for {
			l, err := s.ListModelPrices(ctx, admin, "", pg)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range l.Data {
				seen = append(seen, r.Provider+"\x00"+r.Model)
			}
			if l.NextCursor == nil {
				break
			}
			pg.Cursor = *l.NextCursor
		}
		if len(seen) != total {
			t.Fatalf("paged %d rows, want %d", len(seen), total)
		}
		uniq := map[string]bool{}
		for _, k := range seen {
			if uniq[k] {
				t.Fatalf("row %q listed twice", k)
			}
			uniq[k] = true
		}
		l, err := s.ListModelPrices(ctx, admin, "anthropic", Page{Limit: 1000})
		if err != nil || len(l.Data) == 0 {
			t.Fatalf("by provider: %v %+v", err, l)
		}
		for _, r := range l.Data {
			if r.Provider != "anthropic" {
				t.Fatalf("provider filter returned %+v", r)
			}
		}
		_, err = s.ListModelPrices(ctx, admin, "", Page{Cursor: "!!"})
		wantErrParam(t, err, 400, "invalid_request", "cursor")
	})
}

func TestPutModelPrices(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		dep := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		sun := dep.AddDate(0, 6, 0)
		in := []PriceInput{
			{Provider: "openai", Model: "gpt-custom", InputPerMTok: money.FromFloat(2.5), OutputPerMTok: money.FromFloat(10)},
			{Provider: "openai-compatible", Model: "llama-3.1-8b", InputPerMTok: 0, OutputPerMTok: 0, DeprecatedAt: &dep, SunsetAt: &sun},
		}
		l, err := s.PutModelPrices(ctx, admin, in)
		if err != nil || len(l.Data) != 2 || l.Data[0].Source != "admin" {
			t.Fatalf("put: %v %+v", err, l)
		}
		in[0].InputPerMTok = money.FromFloat(3)
		if _, err := s.PutModelPrices(ctx, admin, in[:1]); err != nil {
			t.Fatal(err)
		}
		mp, err := store.Get[store.ModelPrice](ctx, s.db, store.Eq("provider", "openai"), store.Eq("model", "gpt-custom"))
		if err != nil || mp.InputPerMTok != money.FromFloat(3) || mp.OutputPerMTok != money.FromFloat(10) {
			t.Fatalf("after upsert: %v %+v", err, mp)
		}
		mp, err = store.Get[store.ModelPrice](ctx, s.db, store.Eq("provider", "openai-compatible"), store.Eq("model", "llama-3.1-8b"))
		if err != nil || mp.SunsetAt == nil || !mp.SunsetAt.Equal(sun) || !mp.DeprecatedAt.Equal(dep) {
			t.Fatalf("dates: %v %+v", err, mp)
		}
		if err := s.DeleteModelPrice(ctx, admin, "openai", "gpt-custom"); err != nil {
			t.Fatal(err)
		}
		wantCode(t, s.DeleteModelPrice(ctx, admin, "openai", "gpt-custom"), 404, "not_found")

		audit, err := store.All[store.AuditEntry](ctx, s.db, "id", store.Eq("action", "model_price.put"))
		if err != nil || len(audit) != 2 {
			t.Fatalf("audit: %v %+v", err, audit)
		}
		raw, _ := json.Marshal(audit[0].Changes)
		if !strings.Contains(string(raw), `{"model":"gpt-custom","provider":"openai"}`) || !strings.Contains(string(raw), "llama-3.1-8b") {
			t.Fatalf("audit changes %s, want the (provider, model) pairs", raw)
		}

		ta := &auth.Principal{UserID: "usr_ta", Role: auth.TenantAdministrator, TenantID: "platform"}
		if _, err := s.ListModelPrices(ctx, ta, "", Page{}); err != nil {
			t.Fatal(err)
		}
		_, err = s.PutModelPrices(ctx, ta, in)
		wantCode(t, err, 403, "forbidden")
		wantCode(t, s.DeleteModelPrice(ctx, ta, "openai-compatible", "llama-3.1-8b"), 403, "forbidden")
		fin := &auth.Principal{UserID: "usr_fin", Role: auth.Finance, TenantID: "platform"}
		if _, err := s.ListModelPrices(ctx, fin, "", Page{}); err != nil {
			t.Fatal(err)
		}
		member := &auth.Principal{UserID: "usr_m", Role: auth.Member, TenantID: "platform"}
		_, err = s.ListModelPrices(ctx, member, "", Page{})
		wantCode(t, err, 403, "forbidden")
	})
}

func TestModelPriceValidation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		dep := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		early := dep.AddDate(0, -1, 0)
		ok := PriceInput{Provider: "openai", Model: "m", InputPerMTok: money.FromFloat(1)}
		tests := []struct {
			name  string
			in    []PriceInput
			param string
		}{
			{"unknown provider", []PriceInput{{Provider: "nope", Model: "m"}}, "[0].provider"},
			{"empty model", []PriceInput{ok, {Provider: "openai"}}, "[1].model"},
			{"long model", []PriceInput{{Provider: "openai", Model: strings.Repeat("m", 257)}}, "[0].model"},
			{"negative", []PriceInput{{Provider: "openai", Model: "m", OutputPerMTok: money.FromFloat(-1)}}, "[0].output_per_mtok"},
			{"too high", []PriceInput{{Provider: "openai", Model: "m", InputPerMTok: money.FromFloat(10000.01)}}, "[0].input_per_mtok"},
			{"sunset before deprecation", []PriceInput{{Provider: "openai", Model: "m", DeprecatedAt: &dep, SunsetAt: &early}}, "[0].sunset_at"},
			{"duplicate", []PriceInput{ok, ok}, "[1].model"},
			{"too many", make([]PriceInput, 1001), ""},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				_, err := s.PutModelPrices(ctx, admin, tc.in)
				wantErrParam(t, err, 400, "invalid_request", tc.param)
			})
		}
		if n, _ := store.Count[store.ModelPrice](ctx, s.db); n != 0 {
			t.Fatalf("%d prices written by refused requests", n)
		}
		top := []PriceInput{{Provider: "openai", Model: "m", InputPerMTok: money.FromFloat(10000)}}
		if _, err := s.PutModelPrices(ctx, admin, top); err != nil {
			t.Fatalf("10000 USD/Mtok is allowed: %v", err)
		}
	})
}

// TestPutModelPriceTiers: the cache-write prices and the long-context tier
// (CONTRACT §14) are stored and read back; a tier without a threshold, a
// negative or absurd threshold and a price out of range are refused with
// the field named.
func TestPutModelPriceTiers(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		in := PriceInput{Provider: "anthropic", Model: "claude-custom", InputPerMTok: money.FromFloat(3), OutputPerMTok: money.FromFloat(15),
			CachedInputPerMTok: money.FromFloat(0.3), CacheWritePerMTok: money.FromFloat(3.75), CacheWrite1hPerMTok: money.FromFloat(6),
			LongContextThresholdTokens: 200_000, LongContextInputPerMTok: money.FromFloat(6), LongContextOutputPerMTok: money.FromFloat(22.5)}
		if _, err := s.PutModelPrices(ctx, admin, []PriceInput{in}); err != nil {
			t.Fatal(err)
		}
		mp, err := store.Get[store.ModelPrice](ctx, s.db, store.Eq("provider", "anthropic"), store.Eq("model", "claude-custom"))
		if err != nil {
			t.Fatal(err)
		}
		if mp.CacheWritePerMTok != money.FromFloat(3.75) || mp.CacheWrite1hPerMTok != money.FromFloat(6) ||
			mp.LongContextThresholdTokens != 200_000 || mp.LongContextInputPerMTok != money.FromFloat(6) ||
			mp.LongContextOutputPerMTok != money.FromFloat(22.5) {
			t.Errorf("stored %+v, want the tiers put", mp)
		}
		for _, tc := range []struct {
			name  string
			edit  func(*PriceInput)
			param string
		}{
			{"tier without threshold", func(p *PriceInput) { p.LongContextThresholdTokens = 0 }, "[0].long_context_threshold_tokens"},
			{"negative threshold", func(p *PriceInput) { p.LongContextThresholdTokens = -1 }, "[0].long_context_threshold_tokens"},
			{"absurd threshold", func(p *PriceInput) { p.LongContextThresholdTokens = 1 << 40 }, "[0].long_context_threshold_tokens"},
			{"negative write", func(p *PriceInput) { p.CacheWritePerMTok = -1 }, "[0].cache_write_per_mtok"},
			{"huge 1h write", func(p *PriceInput) { p.CacheWrite1hPerMTok = money.FromFloat(20_000) }, "[0].cache_write_1h_per_mtok"},
			{"huge long output", func(p *PriceInput) { p.LongContextOutputPerMTok = money.FromFloat(20_000) }, "[0].long_context_output_per_mtok"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				bad := in
				tc.edit(&bad)
				_, err := s.PutModelPrices(ctx, admin, []PriceInput{bad})
				wantErrParam(t, err, 400, "invalid_request", tc.param)
			})
		}
	})
}

// TestSeedPriceTiersOnASeededStore: a store seeded before the cache-write
// prices and long-context tiers existed gets them once on the rows still
// as seeded; a row an operator changed keeps the operator's price.
func TestSeedPriceTiersOnASeededStore(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		if _, err := s.SeedPrices(ctx); err != nil {
			t.Fatal(err)
		}
		// Back to a store seeded before the tiers: no tier columns set, no
		// tiers mark.
		if _, err := s.db.NewUpdate().Model((*store.ModelPrice)(nil)).Set("cache_write_per_mtok = 0").
			Set("cache_write_1h_per_mtok = 0").Set("long_context_threshold_tokens = 0").
			Set("long_context_input_per_mtok = 0").Set("long_context_output_per_mtok = 0").Where("1 = 1").Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := s.db.NewDelete().Table("meta").Where("key = ?", metaPriceTiersSeeded).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		opus := PriceInput{Provider: "anthropic", Model: "claude-opus-4-5", InputPerMTok: money.FromFloat(4), OutputPerMTok: money.FromFloat(20)}
		if _, err := s.PutModelPrices(ctx, admin, []PriceInput{opus}); err != nil {
			t.Fatal(err)
		}
		n, err := s.SeedPrices(ctx)
		if err != nil || n == 0 {
			t.Fatalf("tier seeding: %d, %v; want rows changed", n, err)
		}
		if n2, err := s.SeedPrices(ctx); err != nil || n2 != 0 {
			t.Fatalf("second tier seeding: %d, %v; want nothing", n2, err)
		}
		sonnet, err := store.Get[store.ModelPrice](ctx, s.db, store.Eq("provider", "anthropic"), store.Eq("model", "claude-sonnet-4-5"))
		if err != nil {
			t.Fatal(err)
		}
		if sonnet.CacheWritePerMTok != money.FromFloat(3.75) || sonnet.CacheWrite1hPerMTok != money.FromFloat(6) ||
			sonnet.LongContextThresholdTokens != 200_000 || sonnet.LongContextInputPerMTok != money.FromFloat(6) {
			t.Errorf("seeded sonnet %+v, want its cache writes and long-context tier", sonnet)
		}
		gem, err := store.Get[store.ModelPrice](ctx, s.db, store.Eq("provider", "google"), store.Eq("model", "gemini-2.5-pro"))
		if err != nil || gem.LongContextThresholdTokens != 200_000 || gem.LongContextOutputPerMTok != money.FromFloat(15) {
			t.Errorf("seeded gemini-2.5-pro %+v (%v), want its long-context tier", gem, err)
		}
		mine, err := store.Get[store.ModelPrice](ctx, s.db, store.Eq("provider", "anthropic"), store.Eq("model", "claude-opus-4-5"))
		if err != nil || mine.Source != PriceSourceAdmin || mine.CacheWritePerMTok != 0 || mine.InputPerMTok != money.FromFloat(4) {
			t.Errorf("operator's price %+v (%v), want it kept", mine, err)
		}
	})
}
