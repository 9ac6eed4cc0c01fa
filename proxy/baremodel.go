package proxy

import (
	"github.com/sluicehq/sluice/internal/catalog"
	"github.com/sluicehq/sluice/proxy/snapshot"
)

// bareModelProvider resolves a bare model id on a compat door (CONTRACT
// §12) that names no route: to the one provider whose key on the gateway
// lists the model, or, when no key lists it, to the one provider whose
// catalog entry does — preferring, among several, the one provider with a
// key on the gateway. ok is false when none or several providers qualify:
// the caller answers 400 unknown_model.
func bareModelProvider(gw *snapshot.Gateway, model string) (provider string, ok bool) {
	var listed string
	n := 0
	for prov, keys := range gw.Keys {
		for _, k := range keys {
			if contains(k.Models, model) {
				if prov != listed {
					listed, n = prov, n+1
				}
				break
			}
		}
	}
	if n == 1 {
		return listed, true
	}
	if n > 1 {
		return "", false
	}
	var inCatalog, withKey []string
	for _, m := range catalog.Models() {
		if m.ID != model || contains(inCatalog, m.Provider) {
			continue
		}
		inCatalog = append(inCatalog, m.Provider)
		if len(gw.Keys[m.Provider]) > 0 {
			withKey = append(withKey, m.Provider)
		}
	}
	switch {
	case len(inCatalog) == 1:
		return inCatalog[0], true
	case len(withKey) == 1:
		return withKey[0], true
	}
	return "", false
}
