package providers

import (
	"context"

	"github.com/sluicehq/sluice/internal/catalog"
)

// Registry maps provider ids to their adapters. It is built once and never
// changes, so lookups take no lock.
type Registry struct {
	byID map[string]Provider
}

// NewRegistry returns the adapters of every provider in the catalog that
// has one, all sending their calls through c.
//
// The dynamic type of each adapter implements Completer and Embedder only
// when the catalog says the provider serves completions and embeddings,
// so a type assertion tells the truth.
func NewRegistry(c *Client) *Registry {
	r := &Registry{byID: make(map[string]Provider)}
	for _, p := range catalog.Providers() {
		switch p.Schema {
		case catalog.SchemaOpenAI:
			r.byID[p.ID] = withCapabilities(NewOpenAI(p.ID, c), p.Capabilities)
		default:
			// The translating adapters: each file registers its own.
			if a := translating(p.Schema, c); a != nil {
				r.byID[p.ID] = a
			}
		}
	}
	return r
}

// Get returns the adapter of provider id.
func (r *Registry) Get(id string) (Provider, bool) {
	p, ok := r.byID[id]
	return p, ok
}

// withCapabilities wraps o in the type that exposes exactly the optional
// interfaces caps allows.
func withCapabilities(o *OpenAI, caps catalog.Capabilities) Provider {
	core := openaiCore{o}
	switch {
	case caps.Completions && caps.Embeddings:
		return openaiCompleteEmbed{openaiComplete{core}}
	case caps.Completions:
		return openaiComplete{core}
	case caps.Embeddings:
		return openaiEmbed{core}
	}
	return core
}

// openaiCore exposes only the Provider methods of an OpenAI adapter. It
// holds the adapter in a named field, not embedded, so that Complete and
// Embed are not promoted.
type openaiCore struct{ o *OpenAI }

func (p openaiCore) Name() string { return p.o.Name() }

func (p openaiCore) Chat(ctx context.Context, req *Request) (*Response, error) {
	return p.o.Chat(ctx, req)
}

func (p openaiCore) ChatStream(ctx context.Context, req *Request) (Stream, error) {
	return p.o.ChatStream(ctx, req)
}

// openaiComplete adds Completer.
type openaiComplete struct{ openaiCore }

func (p openaiComplete) Complete(ctx context.Context, req *Request) (*Response, error) {
	return p.o.Complete(ctx, req)
}

func (p openaiComplete) CompleteStream(ctx context.Context, req *Request) (Stream, error) {
	return p.o.CompleteStream(ctx, req)
}

// openaiEmbed adds Embedder.
type openaiEmbed struct{ openaiCore }

func (p openaiEmbed) Embed(ctx context.Context, req *Request) (*Response, error) {
	return p.o.Embed(ctx, req)
}

// openaiCompleteEmbed adds both.
type openaiCompleteEmbed struct{ openaiComplete }

func (p openaiCompleteEmbed) Embed(ctx context.Context, req *Request) (*Response, error) {
	return p.o.Embed(ctx, req)
}

var (
	_ Provider  = openaiCore{}
	_ Completer = openaiComplete{}
	_ Embedder  = openaiEmbed{}
	_ Completer = openaiCompleteEmbed{}
	_ Embedder  = openaiCompleteEmbed{}
)

// translating returns the adapter of a native (non-OpenAI) wire format, or
// nil while it does not exist.
func translating(schema string, c *Client) Provider {
	switch schema {
	case catalog.SchemaAzure:
		return newAzure(c)
	case catalog.SchemaAnthropic:
		return newAnthropic(c)
	case catalog.SchemaGemini:
		return newGemini(c)
	case catalog.SchemaBedrock:
		return NewBedrock(c)
	case catalog.SchemaCohere:
		return newCohere(c)
	}
	return nil
}
