package main

import (
	"context"
	"strings"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/catalog"
	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/providers/registry"
	"github.com/sluicehq/sluice/proxy/snapshot"
)

// keyTester makes the admin API's key tests with the proxy's provider
// adapters, over a client of its own: the domain does not import the data
// plane, and a process serving only the admin API can test keys too.
type keyTester struct{ reg *registry.Registry }

var _ admin.KeyTester = keyTester{}

// newKeyTester returns a key tester whose client follows the upstream
// address policy of the proxy (--allow-private-upstreams).
func newKeyTester(allowPrivate bool) keyTester {
	client := providers.NewClient(providers.ClientConfig{AllowPrivate: allowPrivate, UserAgent: "sluice/" + version,
		MaxConnsPerHost: 4}) // key tests are rare and limited per key
	return keyTester{reg: registry.New(client)}
}

// TestKey implements admin.KeyTester.
func (t keyTester) TestKey(ctx context.Context, pr admin.KeyProbe) error {
	base := pr.BaseURL
	if base == "" {
		p, _ := catalog.LookupProvider(pr.Provider)
		base = p.DefaultBaseURL
	}
	cred := providers.Credential{KeyID: "test", Key: pr.Key, BaseURL: strings.TrimSuffix(base, "/"), Options: snapshot.KeyOptions(pr.Options)}
	return t.reg.Probe(ctx, pr.Provider, pr.Model, cred)
}
