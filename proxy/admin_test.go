package proxy

import (
	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/canary"
)

// adminWith returns an admin service over the harness's store with the
// parts of this process that set fills in (the proxy's breakers, the
// budgets), the way cmd/sluice wires the admin API of a serving process.
func (h *harness) adminWith(set func(*admin.Config)) *admin.Service {
	h.tb.Helper()
	cfg := admin.Config{Store: h.st, Box: h.box, AllowPrivateBaseURLs: true, Logger: canary.Logger(h.tb)}
	set(&cfg)
	svc, err := admin.New(cfg)
	must(h.tb, err)
	return svc
}

// adminBreakers shows the proxy's breakers to the admin domain, as
// cmd/sluice's adapter of the same name does.
type adminBreakers struct{ inf *Inference }

func (b adminBreakers) BreakerStates(gatewayID string) map[string]admin.BreakerState {
	st := b.inf.BreakerStates(gatewayID)
	out := make(map[string]admin.BreakerState, len(st))
	for k, s := range st {
		out[k] = admin.BreakerState{Provider: s.Provider, KeyAlias: s.KeyAlias, State: string(s.State),
			ConsecutiveFailures: s.ConsecutiveFailures, OpenedAt: s.OpenedAt, NextProbeAt: s.NextProbeAt}
	}
	return out
}
