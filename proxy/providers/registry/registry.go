// Package registry maps provider ids to their adapters: the one place
// that knows every codec. It lives apart from package providers because
// each codec package imports providers (the shared transport and
// interfaces), so providers cannot import them.
package registry

import (
	"context"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/internal/catalog"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/providers/anthropic"
	"github.com/sluicehq/sluice/proxy/providers/bedrock"
	"github.com/sluicehq/sluice/proxy/providers/cohere"
	"github.com/sluicehq/sluice/proxy/providers/gemini"
	"github.com/sluicehq/sluice/proxy/providers/openai"
)

// Registry maps provider ids to their adapters. It is built once and never
// changes, so lookups take no lock.
type Registry struct {
	byID map[string]providers.Provider
}

// New returns the adapters of every provider in the catalog, chosen by
// the wire format (schema) the catalog gives it, all sending their calls
// through c.
//
// The dynamic type of each adapter implements Completer and Embedder only
// when the catalog says the provider serves completions and embeddings,
// so a type assertion tells the truth.
func New(c *providers.Client) *Registry {
	r := &Registry{byID: make(map[string]providers.Provider)}
	for _, p := range catalog.Providers() {
		if a := adapter(p, c); a != nil {
			r.byID[p.ID] = a
		}
	}
	return r
}

// Get returns the adapter of provider id.
func (r *Registry) Get(id string) (providers.Provider, bool) {
	p, ok := r.byID[id]
	return p, ok
}

// adapter returns the adapter of p's wire format, or nil when there is
// none.
func adapter(p catalog.Provider, c *providers.Client) providers.Provider {
	switch p.Schema {
	case catalog.SchemaOpenAI:
		return openai.ForCatalog(p.ID, c)
	case catalog.SchemaAzure:
		return openai.NewAzure(c)
	case catalog.SchemaAnthropic:
		return anthropic.New(c)
	case catalog.SchemaGemini:
		return gemini.New(c)
	case catalog.SchemaBedrock:
		return bedrock.New(c)
	case catalog.SchemaCohere:
		return cohere.New(c)
	}
	return nil
}

// probeBody is the request of a key test: one short user message. The
// adapter caps the answer at one token (Request.MaxOutputTokens) in its
// own wire format.
var probeBody = []byte(`{"model":"probe","messages":[{"role":"user","content":"ping"}]}`)

// Probe makes the smallest call that shows whether a key works: a chat
// request for one output token to model with cred. The error is the
// upstream's failure (*providers.Error, its message scrubbed of the key).
// The admin API's key test runs it; it is never on the request path.
func (r *Registry) Probe(ctx context.Context, provider, model string, cred providers.Credential) error {
	p, ok := r.Get(provider)
	if !ok {
		return fmt.Errorf("no adapter for provider %q", provider)
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(30 * time.Second)
	}
	_, err := p.Chat(ctx, &providers.Request{Op: llm.OpChat, Model: model, Body: probeBody, Cred: cred,
		Deadline: deadline, MaxOutputTokens: 1})
	return err
}
