package registry

import (
	"testing"

	"github.com/sluicehq/sluice/proxy/providers"
	"github.com/sluicehq/sluice/proxy/providers/internal/codectest"
)

func TestAnthropicRegistry(t *testing.T) {
	p, ok := New(providers.NewClient(providers.ClientConfig{})).Get("anthropic")
	if !ok {
		t.Fatal("anthropic is not registered")
	}
	_, completer := p.(providers.Completer)
	_, embedder := p.(providers.Embedder)
	_, validator := p.(providers.Validator)
	if p.Name() != "anthropic" || completer || embedder || !validator {
		t.Errorf("name %q, Completer %v, Embedder %v, Validator %v", p.Name(), completer, embedder, validator)
	}
}

func TestAzureRegistry(t *testing.T) {
	p, ok := New(providers.NewClient(providers.ClientConfig{})).Get("azure-openai")
	if !ok {
		t.Fatal("azure-openai is not registered")
	}
	caps := codectest.MustProvider(t, "azure-openai").Capabilities
	_, completer := p.(providers.Completer)
	_, embedder := p.(providers.Embedder)
	if p.Name() != "azure-openai" || completer != caps.Completions || embedder != caps.Embeddings {
		t.Errorf("name %q, Completer %v, Embedder %v; catalog %+v", p.Name(), completer, embedder, caps)
	}
}

func TestBedrockRegistry(t *testing.T) {
	p, ok := New(providers.NewClient(providers.ClientConfig{})).Get("bedrock")
	if !ok || p.Name() != "bedrock" {
		t.Fatalf("bedrock not registered: %v", p)
	}
	_, embedder := p.(providers.Embedder)
	_, validator := p.(providers.Validator)
	_, completer := p.(providers.Completer)
	if !embedder || !validator || completer {
		t.Errorf("Embedder %v, Validator %v, Completer %v; want true, true, false", embedder, validator, completer)
	}
}

func TestCohereRegistry(t *testing.T) {
	p, ok := New(providers.NewClient(providers.ClientConfig{})).Get("cohere")
	if !ok {
		t.Fatal("cohere is not registered")
	}
	caps := codectest.MustProvider(t, "cohere").Capabilities
	_, completer := p.(providers.Completer)
	_, embedder := p.(providers.Embedder)
	_, validator := p.(providers.Validator)
	if p.Name() != "cohere" || completer != caps.Completions || embedder != caps.Embeddings || !validator {
		t.Errorf("name %q, Completer %v, Embedder %v, Validator %v; catalog %+v", p.Name(), completer, embedder, validator, caps)
	}
}

func TestGeminiRegistered(t *testing.T) {
	p, ok := New(providers.NewClient(providers.ClientConfig{})).Get("google")
	if !ok || p.Name() != "google" {
		t.Fatalf("google: %v %v", p, ok)
	}
	_, completer := p.(providers.Completer)
	_, embedder := p.(providers.Embedder)
	_, validator := p.(providers.Validator)
	if completer || !embedder || !validator {
		t.Errorf("Completer %v, Embedder %v, Validator %v", completer, embedder, validator)
	}
}

func TestRegistry(t *testing.T) {
	r := New(providers.NewClient(providers.ClientConfig{}))
	want := []string{"cerebras", "deepseek", "fireworks", "groq", "mistral", "ollama", "openai",
		"openai-compatible", "openrouter", "perplexity", "together", "xai"}
	for _, id := range want {
		p, ok := r.Get(id)
		if !ok {
			t.Errorf("%s: not registered", id)
			continue
		}
		caps := codectest.MustProvider(t, id).Capabilities
		_, completer := p.(providers.Completer)
		_, embedder := p.(providers.Embedder)
		if p.Name() != id || completer != caps.Completions || embedder != caps.Embeddings {
			t.Errorf("%s: name %q, Completer %v, Embedder %v; catalog says completions %v, embeddings %v",
				id, p.Name(), completer, embedder, caps.Completions, caps.Embeddings)
		}
	}
	for _, id := range []string{"nope", "", "OpenAI"} {
		if _, ok := r.Get(id); ok {
			t.Errorf("%q is registered", id)
		}
	}
}
