package proxy

import (
	"github.com/sluicehq/sluice/admin"
)

// BreakerStates reports the circuit breakers of a gateway's keys for the
// admin API, keyed by provider + "/" + alias.
func (h *Inference) BreakerStates(gatewayID string) map[string]admin.BreakerState {
	snap := h.cfg.Snapshots.Load()
	if snap == nil {
		return nil
	}
	gw, ok := snap.GatewayByID(gatewayID)
	if !ok {
		return nil
	}
	st := h.cfg.Breakers.Statuses(gatewayID)
	out := make(map[string]admin.BreakerState, len(st))
	for provider, keys := range gw.Keys {
		for _, k := range keys {
			s, ok := st[k.ID]
			if !ok {
				continue
			}
			out[provider+"/"+k.Alias] = admin.BreakerState{Provider: provider, KeyAlias: k.Alias, State: string(s.State),
				ConsecutiveFailures: s.ConsecutiveFailures, OpenedAt: s.OpenedAt, NextProbeAt: s.NextProbeAt}
		}
	}
	return out
}
