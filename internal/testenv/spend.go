package testenv

import (
	"context"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/money"
)

// KindSpend is a budget.SpendSource answering a fixed spend per scope
// kind ("token", "tenant", …).
type KindSpend map[string]money.USD

// SpendSince answers the spend of scope's kind, whatever start.
func (k KindSpend) SpendSince(_ context.Context, scope string, _ time.Time) (int64, error) {
	kind, _, _ := strings.Cut(scope, ":")
	return int64(k[kind]), nil
}
