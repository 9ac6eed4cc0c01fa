package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/internal/testenv"
)

// forEachBackend runs fn as a subtest on a fresh store of every backend.
func forEachBackend(t *testing.T, fn func(t *testing.T, st *store.Store)) {
	t.Helper()
	for _, b := range testenv.Backends {
		t.Run(string(b), func(t *testing.T) { fn(t, testenv.Store(t, b)) })
	}
}

var now = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

func tenant(id string) *store.Tenant {
	return &store.Tenant{ID: id, Name: "Tenant " + id, Status: store.TenantActive, CreatedAt: now, UpdatedAt: now}
}

func insertTenant(t *testing.T, st *store.Store, id string) {
	t.Helper()
	if err := store.Insert(context.Background(), st.DB, tenant(id)); err != nil {
		t.Fatalf("insert tenant %s: %v", id, err)
	}
}

func TestMigrateIdempotent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		for i := range 2 {
			got, err := st.Migrate(ctx)
			if err != nil {
				t.Fatalf("Migrate call %d: %v", i+2, err)
			}
			if len(got) != 0 {
				t.Errorf("Migrate call %d: got %v applied, want none", i+2, got)
			}
		}
		if err := st.Ping(ctx); err != nil {
			t.Errorf("Ping: %v", err)
		}
	})
}

func TestConfigVersion(t *testing.T) {
	forEachBackend(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		version := func() int64 {
			t.Helper()
			v, err := st.ConfigVersion(ctx)
			if err != nil {
				t.Fatalf("ConfigVersion: %v", err)
			}
			return v
		}
		if got := version(); got != 0 {
			t.Fatalf("initial ConfigVersion: got %d, want 0", got)
		}

		bump := func(tx bun.Tx) error { return st.BumpConfigVersion(ctx, tx) }
		if err := st.InTx(ctx, bump); err != nil {
			t.Fatalf("InTx(bump): %v", err)
		}
		if got := version(); got != 1 {
			t.Errorf("after one bump: got %d, want 1", got)
		}

		err := st.InTx(ctx, func(tx bun.Tx) error {
			for range 3 {
				if err := st.BumpConfigVersion(ctx, tx); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("InTx(3 bumps): %v", err)
		}
		if got := version(); got != 4 {
			t.Errorf("after three more bumps: got %d, want 4", got)
		}

		errRollback := errors.New("roll back")
		err = st.InTx(ctx, func(tx bun.Tx) error {
			if err := st.BumpConfigVersion(ctx, tx); err != nil {
				return err
			}
			return errRollback
		})
		if !errors.Is(err, errRollback) {
			t.Errorf("InTx(bump, fail): got %v, want %v", err, errRollback)
		}
		if got := version(); got != 4 {
			t.Errorf("after a rolled-back bump: got %d, want 4", got)
		}

		// Each bump of many concurrent transactions counts once.
		const writers = 8
		errs := make(chan error, writers)
		for range writers {
			go func() { errs <- st.InTx(ctx, bump) }()
		}
		for range writers {
			if err := <-errs; err != nil {
				t.Errorf("concurrent bump: %v", err)
			}
		}
		if got := version(); got != 4+writers {
			t.Errorf("after %d concurrent bumps: got %d, want %d", writers, got, 4+writers)
		}
	})
}

func TestInsertDuplicate(t *testing.T) {
	forEachBackend(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		insertTenant(t, st, "acme")
		gw := func(id, slug string) *store.Gateway {
			return &store.Gateway{ID: id, TenantID: "acme", Slug: slug, Name: slug, CreatedAt: now, UpdatedAt: now}
		}
		if err := store.Insert(ctx, st.DB, gw("gw_1", "main")); err != nil {
			t.Fatalf("insert gateway: %v", err)
		}
		tests := []struct {
			name string
			ins  func() error
		}{
			{"primary key", func() error { return store.Insert(ctx, st.DB, tenant("acme")) }},
			{"unique index", func() error { return store.Insert(ctx, st.DB, gw("gw_2", "main")) }},
			{"primary key in tx", func() error {
				return st.InTx(ctx, func(tx bun.Tx) error { return store.Insert(ctx, tx, tenant("acme")) })
			}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				err := tt.ins()
				if !errors.Is(err, store.ErrDuplicate) {
					t.Errorf("duplicate insert: got %v, want store.ErrDuplicate", err)
				}
			})
		}
		if err := store.Insert(ctx, st.DB, gw("gw_3", "other")); err != nil {
			t.Errorf("insert gateway with a new slug: got %v, want nil", err)
		}
	})
}

func TestGet(t *testing.T) {
	forEachBackend(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		want := tenant("acme")
		want.Settings = store.TenantSettings{LogRetentionDays: 30, AllowedProviders: []string{"openai"}}
		if err := store.Insert(ctx, st.DB, want); err != nil {
			t.Fatal(err)
		}
		got, err := store.Get[store.Tenant](ctx, st.DB, store.Eq("id", "acme"))
		if err != nil {
			t.Fatalf("Get(acme): %v", err)
		}
		if diff := cmp.Diff(want.Settings, got.Settings); diff != "" {
			t.Errorf("settings (-want +got):\n%s", diff)
		}
		if !got.CreatedAt.Equal(now) {
			t.Errorf("created_at: got %v, want %v", got.CreatedAt, now)
		}

		missing := []struct {
			name  string
			conds []store.Cond
		}{
			{"unknown id", []store.Cond{store.Eq("id", "nope")}},
			{"other condition fails", []store.Cond{store.Eq("id", "acme"), store.Eq("status", store.TenantDeleted)}},
		}
		for _, tt := range missing {
			t.Run(tt.name, func(t *testing.T) {
				got, err := store.Get[store.Tenant](ctx, st.DB, tt.conds...)
				if !errors.Is(err, store.ErrNotFound) {
					t.Errorf("Get: got %v, %v; want store.ErrNotFound", got, err)
				}
			})
		}
		if err := store.Update(ctx, st.DB, tenant("nope"), "name"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Update(missing): got %v, want store.ErrNotFound", err)
		}
	})
}

func TestListPagination(t *testing.T) {
	forEachBackend(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		// Inserted out of order: the listing is ordered by id.
		for _, id := range []string{"delta", "alpha", "echo", "charlie", "bravo"} {
			insertTenant(t, st, id)
		}
		key := func(x *store.Tenant) string { return x.ID }
		var pages [][]string
		var cursors []*string
		cursor := ""
		for range 10 {
			rows, next, err := store.List(ctx, st.DB, "id", key, store.Page{Limit: 2, Cursor: cursor})
			if err != nil {
				t.Fatalf("List(cursor %q): %v", cursor, err)
			}
			var page []string
			for _, r := range rows {
				page = append(page, r.ID)
			}
			pages = append(pages, page)
			cursors = append(cursors, next)
			if next == nil {
				break
			}
			cursor = *next
		}
		want := [][]string{{"alpha", "bravo"}, {"charlie", "delta"}, {"echo"}}
		if diff := cmp.Diff(want, pages); diff != "" {
			t.Errorf("pages (-want +got):\n%s", diff)
		}
		if len(cursors) != 3 {
			t.Fatalf("pages: got %d, want 3", len(cursors))
		}
		for i, c := range cursors[:2] {
			if c == nil || *c == "" {
				t.Errorf("cursor after page %d: got %v, want a cursor", i+1, c)
			}
		}
		if cursors[2] != nil {
			t.Errorf("cursor after the last page: got %q, want nil", *cursors[2])
		}
		seen := map[string]bool{}
		for _, p := range pages {
			for _, id := range p {
				if seen[id] {
					t.Errorf("tenant %s listed twice", id)
				}
				seen[id] = true
			}
		}

		t.Run("exact multiple ends with nil cursor", func(t *testing.T) {
			rows, next, err := store.List(ctx, st.DB, "id", key, store.Page{Limit: 5})
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 5 || next != nil {
				t.Errorf("List(limit 5 of 5): got %d rows, cursor %v; want 5 rows, nil cursor", len(rows), next)
			}
		})
		t.Run("default limit", func(t *testing.T) {
			rows, next, err := store.List(ctx, st.DB, "id", key, store.Page{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 5 || next != nil {
				t.Errorf("List(limit 0): got %d rows, cursor %v; want 5 rows, nil cursor", len(rows), next)
			}
		})
		t.Run("conditions", func(t *testing.T) {
			rows, _, err := store.List(ctx, st.DB, "id", key, store.Page{Limit: 10},
				store.In("id", []string{"alpha", "echo", "zulu"}))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rows {
				got = append(got, r.ID)
			}
			if diff := cmp.Diff([]string{"alpha", "echo"}, got); diff != "" {
				t.Errorf("List(In) (-want +got):\n%s", diff)
			}
		})
		t.Run("empty result is an empty slice", func(t *testing.T) {
			rows, next, err := store.List(ctx, st.DB, "id", key, store.Page{Limit: 2}, store.Eq("id", "zulu"))
			if err != nil {
				t.Fatal(err)
			}
			if rows == nil || len(rows) != 0 || next != nil {
				t.Errorf("List(no match): got %#v, %v; want [], nil", rows, next)
			}
		})
		t.Run("bad cursor", func(t *testing.T) {
			if _, _, err := store.List(ctx, st.DB, "id", key, store.Page{Limit: 2, Cursor: "!!"}); err == nil {
				t.Errorf("List(bad cursor): got no error, want one")
			}
		})
	})
}

func TestCursorRoundTrip(t *testing.T) {
	for _, k := range []string{"", "alpha", "gw_01j9zz", "a/b+c=d", "ünïcode"} {
		t.Run(k, func(t *testing.T) {
			got, err := store.DecodeCursor(store.EncodeCursor(k))
			if err != nil {
				t.Fatal(err)
			}
			if got != k {
				t.Errorf("DecodeCursor(EncodeCursor(%q)): got %q, want %q", k, got, k)
			}
		})
	}
}

func TestDelete(t *testing.T) {
	forEachBackend(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		for _, id := range []string{"a1", "a2", "b1"} {
			insertTenant(t, st, id)
		}
		n, err := store.Delete[store.Tenant](ctx, st.DB)
		if err == nil {
			t.Errorf("Delete without conditions: got %d deleted and no error, want an error", n)
		}
		if c, err := store.Count[store.Tenant](ctx, st.DB); err != nil || c != 3 {
			t.Errorf("Count after refused delete: got %d, %v; want 3, nil", c, err)
		}
		n, err = store.Delete[store.Tenant](ctx, st.DB, store.In("id", []string{"a1", "a2", "zz"}))
		if err != nil || n != 2 {
			t.Errorf("Delete(In a1, a2, zz): got %d, %v; want 2, nil", n, err)
		}
		n, err = store.Delete[store.Tenant](ctx, st.DB, store.Eq("id", "a1"))
		if err != nil || n != 0 {
			t.Errorf("Delete(a1 again): got %d, %v; want 0, nil", n, err)
		}
		ok, err := store.Exists[store.Tenant](ctx, st.DB, store.Eq("id", "b1"))
		if err != nil || !ok {
			t.Errorf("Exists(b1): got %v, %v; want true, nil", ok, err)
		}
	})
}

func TestMeta(t *testing.T) {
	forEachBackend(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		v, ok, err := st.Meta(ctx, st.DB, "bootstrap_done")
		if err != nil || ok || v != "" {
			t.Errorf("Meta(absent): got %q, %v, %v; want \"\", false, nil", v, ok, err)
		}
		if err := st.SetMeta(ctx, st.DB, "bootstrap_done", "yes"); err != nil {
			t.Fatalf("SetMeta: %v", err)
		}
		v, ok, err = st.Meta(ctx, st.DB, "bootstrap_done")
		if err != nil || !ok || v != "yes" {
			t.Errorf("Meta after SetMeta: got %q, %v, %v; want \"yes\", true, nil", v, ok, err)
		}
		if err := st.SetMeta(ctx, st.DB, "bootstrap_done", "again"); err != nil {
			t.Fatalf("SetMeta overwrite: %v", err)
		}
		v, _, _ = st.Meta(ctx, st.DB, "bootstrap_done")
		if v != "again" {
			t.Errorf("Meta after overwrite: got %q, want %q", v, "again")
		}
		// Inside a rolled-back transaction the write is undone.
		errRollback := errors.New("roll back")
		err = st.InTx(ctx, func(tx bun.Tx) error {
			if err := st.SetMeta(ctx, tx, "k", "v"); err != nil {
				return err
			}
			if v, ok, err := st.Meta(ctx, tx, "k"); err != nil || !ok || v != "v" {
				t.Errorf("Meta inside tx: got %q, %v, %v; want \"v\", true, nil", v, ok, err)
			}
			return errRollback
		})
		if !errors.Is(err, errRollback) {
			t.Errorf("InTx: got %v, want %v", err, errRollback)
		}
		if _, ok, _ := st.Meta(ctx, st.DB, "k"); ok {
			t.Errorf("Meta after rollback: got present, want absent")
		}
		// config_version lives in meta too.
		v, ok, err = st.Meta(ctx, st.DB, "config_version")
		if err != nil || !ok || v != "0" {
			t.Errorf("Meta(config_version): got %q, %v, %v; want \"0\", true, nil", v, ok, err)
		}
	})
}

func TestStrictUnmarshal(t *testing.T) {
	tests := []struct {
		name    string
		into    func() any
		in      string
		wantErr bool
	}{
		{"rate limit ok", func() any { return new(store.RateLimit) }, `{"requests_per_minute":10,"tokens_per_minute":null}`, false},
		{"rate limit unknown field", func() any { return new(store.RateLimit) }, `{"requests_per_minute":10,"rpm":5}`, true},
		{"rate limit trailing data", func() any { return new(store.RateLimit) }, `{"requests_per_minute":10} {}`, true},
		{"budget ok", func() any { return new(store.Budget) }, `{"amount_usd":10,"period":"monthly","hard":false}`, false},
		{"budget with spent_usd", func() any { return new(store.Budget) }, `{"amount_usd":10,"period":"monthly","spent_usd":3}`, true},
		{"budget with remaining_usd", func() any { return new(store.Budget) }, `{"amount_usd":10,"remaining_usd":3}`, true},
		{"budget with resets_at", func() any { return new(store.Budget) }, `{"amount_usd":10,"resets_at":"2026-01-01T00:00:00Z"}`, true},
		{"budget amount as a string", func() any { return new(store.Budget) }, `{"amount_usd":"10"}`, true},
		{"route ok", func() any { return new(store.Route) },
			`{"name":"fast","strategy":"fallback","targets":[{"provider":"openai","model":"gpt-4o-mini","key_alias":null,"weight":1}]}`, false},
		{"route unknown field", func() any { return new(store.Route) }, `{"name":"fast","strategy":"fallback","targets":[],"fallback":true}`, true},
		{"route target unknown field", func() any { return new(store.Route) },
			`{"name":"fast","targets":[{"provider":"openai","model":"m","wieght":1}]}`, true},
		{"cache unknown field", func() any { return new(store.CacheSettings) }, `{"enabled":true,"ttl":60}`, true},
		{"retry unknown field", func() any { return new(store.RetrySettings) }, `{"max_attempts":2,"backoff":1}`, true},
		{"breaker unknown field", func() any { return new(store.BreakerSettings) }, `{"failure_threshold":2,"cooldown":1}`, true},
		{"key options unknown field", func() any { return new(store.KeyOptions) }, `{"region":"eu","secret_access_key":"x"}`, true},
		{"tenant settings unknown field", func() any { return new(store.TenantSettings) }, `{"log_retention_days":7,"retention":1}`, true},
		{"gateway nested rate limit typo", func() any { return new(store.Gateway) }, `{"rate_limit":{"requests_per_min":10}}`, true},
		{"gateway nested budget state", func() any { return new(store.Gateway) }, `{"budget":{"amount_usd":5,"spent_usd":1}}`, true},
		{"gateway nested route target typo", func() any { return new(store.Gateway) },
			`{"routes":[{"name":"r","strategy":"fallback","targets":[{"provider":"p","model":"m","alias":"x"}]}]}`, true},
		{"gateway nested ok", func() any { return new(store.Gateway) },
			`{"rate_limit":{"requests_per_minute":10},"budget":{"amount_usd":5,"period":"daily"},"routes":[{"name":"r","strategy":"fallback","targets":[{"provider":"p","model":"m"}]}]}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, dec := range []struct {
				name string
				fn   func([]byte, any) error
			}{{"StrictUnmarshal", store.StrictUnmarshal}, {"json.Unmarshal", json.Unmarshal}} {
				err := dec.fn([]byte(tt.in), tt.into())
				if (err != nil) != tt.wantErr {
					t.Errorf("%s(%s): got error %v, want error %v", dec.name, tt.in, err, tt.wantErr)
				}
			}
		})
	}
}

func TestBudgetJSON(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want store.Budget
	}{
		{"hard by default", `{"amount_usd":12.5,"period":"monthly"}`, store.Budget{AmountUSD: 12_500_000_000, Period: "monthly", Hard: true}},
		{"soft", `{"amount_usd":1,"period":"total","hard":false}`, store.Budget{AmountUSD: money.PerDollar, Period: "total", Hard: false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got store.Budget
			if err := json.Unmarshal([]byte(tt.in), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Budget (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBudgetValue(t *testing.T) {
	resets := now.Add(24 * time.Hour)
	b := &store.Budget{AmountUSD: 12_500_000_000, Period: "monthly", Hard: true,
		SpentUSD: 3 * money.PerDollar, RemainingUSD: 9_500_000_000, ResetsAt: &resets}
	v, err := b.Value()
	if err != nil {
		t.Fatalf("Value: %v", err)
	}
	s, ok := v.(string)
	if !ok {
		t.Fatalf("Value: got %T, want string", v)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(s), &got); err != nil {
		t.Fatalf("Value is not JSON: %q: %v", s, err)
	}
	want := map[string]any{"amount_usd": 12.5, "period": "monthly", "hard": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stored budget (-want +got):\n%s", diff)
	}
	var nilBudget *store.Budget
	if v, err := nilBudget.Value(); v != nil || err != nil {
		t.Errorf("nil Budget Value: got %v, %v; want nil, nil", v, err)
	}

	forEachBackend(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		insertTenant(t, st, "acme")
		gws := []*store.Gateway{
			{ID: "gw_b", TenantID: "acme", Slug: "b", Name: "b", Budget: b, CreatedAt: now, UpdatedAt: now},
			{ID: "gw_n", TenantID: "acme", Slug: "n", Name: "n", CreatedAt: now, UpdatedAt: now},
		}
		for _, g := range gws {
			if err := store.Insert(ctx, st.DB, g); err != nil {
				t.Fatalf("insert %s: %v", g.ID, err)
			}
		}
		var raw string
		if err := st.DB.NewSelect().Table("gateways").Column("budget").Where("id = ?", "gw_b").Scan(ctx, &raw); err != nil {
			t.Fatal(err)
		}
		var col map[string]any
		if err := json.Unmarshal([]byte(raw), &col); err != nil {
			t.Fatalf("budget column %q: %v", raw, err)
		}
		if diff := cmp.Diff(want, col); diff != "" {
			t.Errorf("budget column (-want +got):\n%s", diff)
		}
		var isNull bool
		if err := st.DB.NewSelect().Table("gateways").ColumnExpr("budget IS NULL").Where("id = ?", "gw_n").Scan(ctx, &isNull); err != nil {
			t.Fatal(err)
		}
		if !isNull {
			t.Errorf("nil budget column: got not NULL, want NULL")
		}
		got, err := store.Get[store.Gateway](ctx, st.DB, store.Eq("id", "gw_b"))
		if err != nil {
			t.Fatal(err)
		}
		wantRead := &store.Budget{AmountUSD: 12_500_000_000, Period: "monthly", Hard: true}
		if diff := cmp.Diff(wantRead, got.Budget); diff != "" {
			t.Errorf("budget read back (-want +got):\n%s", diff)
		}
		gotN, err := store.Get[store.Gateway](ctx, st.DB, store.Eq("id", "gw_n"))
		if err != nil {
			t.Fatal(err)
		}
		if gotN.Budget != nil {
			t.Errorf("nil budget read back: got %+v, want nil", *gotN.Budget)
		}
	})
}

// TestClaimAlert: the second claim of the same tenant, scope, scope id,
// period start and threshold adds nothing, on both backends; another
// threshold or period is a new claim.
func TestClaimAlert(t *testing.T) {
	forEachBackend(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		insertTenant(t, st, "acme")
		claim := func(id string, start int64, threshold int) bool {
			t.Helper()
			ok, err := store.ClaimAlert(ctx, st.DB, &store.Alert{ID: id, TenantID: "acme", Scope: "gateway", ScopeID: "gw_1",
				Period: "daily", PeriodStart: start, Threshold: threshold, At: now, Status: store.AlertPending})
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		for _, c := range []struct {
			id        string
			start     int64
			threshold int
			want      bool
		}{
			{"alert_1", 1000, 50, true}, {"alert_2", 1000, 50, false}, {"alert_3", 1000, 80, true}, {"alert_4", 2000, 50, true},
		} {
			if got := claim(c.id, c.start, c.threshold); got != c.want {
				t.Errorf("claim %s (start %d, %d %%) = %v, want %v", c.id, c.start, c.threshold, got, c.want)
			}
		}
		rows, next, err := store.ListAlerts(ctx, st.DB, "acme", store.Page{Limit: 2})
		if err != nil || next == nil || len(rows) != 2 || rows[0].ID != "alert_4" || rows[1].ID != "alert_3" {
			t.Fatalf("first page = %v, next %v, err %v; want alert_4, alert_3 and a cursor", rows, next, err)
		}
		rows, next, err = store.ListAlerts(ctx, st.DB, "acme", store.Page{Limit: 2, Cursor: *next})
		if err != nil || next != nil || len(rows) != 1 || rows[0].ID != "alert_1" {
			t.Fatalf("second page = %v, next %v, err %v; want alert_1 alone", rows, next, err)
		}
	})
}
