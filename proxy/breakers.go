package proxy

import (
	"io"
	"slices"
	"strconv"

	"github.com/sluicehq/sluice/proxy/breaker"
)

// KeyBreaker is the circuit breaker of one provider key of a gateway.
type KeyBreaker struct {
	Provider string
	KeyAlias string
	breaker.Status
}

// BreakerStates reports the circuit breakers of a gateway's keys, keyed by
// provider + "/" + alias; a key without a breaker yet is left out (closed).
// The admin API reads them through an adapter that cmd/sluice wires.
func (h *Inference) BreakerStates(gatewayID string) map[string]KeyBreaker {
	snap := h.cfg.Snapshots.Load()
	if snap == nil {
		return nil
	}
	gw, ok := snap.GatewayByID(gatewayID)
	if !ok {
		return nil
	}
	st := h.cfg.Breakers.Statuses(gatewayID)
	out := make(map[string]KeyBreaker, len(st))
	for provider, keys := range gw.Keys {
		for _, k := range keys {
			s, ok := st[k.ID]
			if !ok {
				continue
			}
			out[provider+"/"+k.Alias] = KeyBreaker{Provider: provider, KeyAlias: k.Alias, Status: s}
		}
	}
	return out
}

// WriteBreakerMetrics writes sluice_circuit_breaker_state in the Prometheus
// text format: one gauge per gateway × provider key of the current
// snapshot, 0 closed, 1 half-open, 2 open (CONTRACT §13). The series follow
// the configuration: a deleted key or gateway drops out at the next scrape.
// It runs on a scrape, never on a request.
func (h *Inference) WriteBreakerMetrics(w io.Writer) {
	snap := h.cfg.Snapshots.Load()
	if snap == nil {
		return
	}
	var b []byte
	for _, gw := range snap.Gateways() {
		st := h.cfg.Breakers.Statuses(gw.ID)
		providers := make([]string, 0, len(gw.Keys))
		for p := range gw.Keys {
			providers = append(providers, p)
		}
		slices.Sort(providers)
		for _, p := range providers {
			for _, k := range gw.Keys[p] {
				if len(b) == 0 {
					b = append(b, "# TYPE sluice_circuit_breaker_state gauge\n"...)
				}
				b = append(b, `sluice_circuit_breaker_state{gateway="`...)
				b = appendLabel(b, gw.TenantID+"/"+gw.Slug)
				b = append(b, `",provider="`...)
				b = appendLabel(b, p)
				b = append(b, `",key_alias="`...)
				b = appendLabel(b, k.Alias)
				b = append(b, "\"} "...)
				b = strconv.AppendInt(b, breakerGauge(st[k.ID].State), 10)
				b = append(b, '\n')
			}
		}
	}
	_, _ = w.Write(b)
}

// breakerGauge maps a breaker state to its gauge value; a key without a
// breaker yet is closed.
func breakerGauge(s breaker.State) int64 {
	switch s {
	case breaker.HalfOpen:
		return 1
	case breaker.Open:
		return 2
	}
	return 0
}

// appendLabel appends v escaped as a Prometheus label value.
func appendLabel(b []byte, v string) []byte {
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '\\':
			b = append(b, `\\`...)
		case '"':
			b = append(b, `\"`...)
		case '\n':
			b = append(b, `\n`...)
		default:
			b = append(b, c)
		}
	}
	return b
}
