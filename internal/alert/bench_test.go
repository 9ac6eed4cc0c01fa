package alert_test

import (
	"context"
	"testing"

	"github.com/sluicehq/sluice/internal/alert"
	"github.com/sluicehq/sluice/internal/budget"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/internal/testenv"
)

// BenchmarkOnSettle measures the hook every settle runs on the request's
// goroutine: below the first threshold, and past thresholds already
// offered (the common cases; no worker runs, so nothing is claimed).
func BenchmarkOnSettle(b *testing.B) {
	st := testenv.Store(b, testenv.SQLite)
	a, err := alert.New(alert.Config{DB: st.DB})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		spent int64
	}{{"below", 10}, {"past_all", 150}} {
		s := budget.Settlement{Kind: budget.KindGateway, ID: "gw_01jdbench", Period: store.PeriodMonthly, PeriodStart: t0,
			Amount: 100}
		s.Spent = money.USD(c.spent)
		a.OnSettle(ctx, s) // offers the thresholds once
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				a.OnSettle(ctx, s)
			}
		})
	}
}
