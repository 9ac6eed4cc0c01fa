package openai

import (
	"context"

	"github.com/sluicehq/sluice/internal/catalog"
	"github.com/sluicehq/sluice/proxy/providers"
)

// ForCatalog returns the adapter of provider id, an OpenAI-wire provider
// of the catalog, as the registry hands it out: its dynamic type
// implements Completer and Embedder only when the catalog says the
// provider serves completions and embeddings, so a type assertion tells
// the truth.
func ForCatalog(id string, c *providers.Client) providers.Provider {
	p, _ := catalog.LookupProvider(id)
	return withCapabilities(New(id, c), p.Capabilities)
}

// withCapabilities wraps o in the type that exposes exactly the optional
// interfaces caps allows.
func withCapabilities(o *OpenAI, caps catalog.Capabilities) providers.Provider {
	core := core{o}
	switch {
	case caps.Completions && caps.Embeddings:
		return completeEmbed{complete{core}}
	case caps.Completions:
		return complete{core}
	case caps.Embeddings:
		return embed{core}
	}
	return core
}

// core exposes only the Provider methods of an OpenAI adapter. It
// holds the adapter in a named field, not embedded, so that Complete and
// Embed are not promoted.
type core struct{ o *OpenAI }

func (p core) Name() string { return p.o.Name() }

func (p core) Chat(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	return p.o.Chat(ctx, req)
}

func (p core) ChatStream(ctx context.Context, req *providers.Request) (providers.Stream, error) {
	return p.o.ChatStream(ctx, req)
}

// complete adds Completer.
type complete struct{ core }

func (p complete) Complete(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	return p.o.Complete(ctx, req)
}

func (p complete) CompleteStream(ctx context.Context, req *providers.Request) (providers.Stream, error) {
	return p.o.CompleteStream(ctx, req)
}

// embed adds Embedder.
type embed struct{ core }

func (p embed) Embed(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	return p.o.Embed(ctx, req)
}

// completeEmbed adds both.
type completeEmbed struct{ complete }

func (p completeEmbed) Embed(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	return p.o.Embed(ctx, req)
}

var (
	_ providers.Provider  = core{}
	_ providers.Completer = complete{}
	_ providers.Embedder  = embed{}
	_ providers.Completer = completeEmbed{}
	_ providers.Embedder  = completeEmbed{}
)
