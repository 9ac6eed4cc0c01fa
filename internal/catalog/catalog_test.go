package catalog

import (
	"slices"
	"testing"
)

var wantProviderIDs = []string{
	"anthropic", "azure-openai", "bedrock", "cerebras", "cohere", "deepseek",
	"fireworks", "google", "groq", "mistral", "ollama", "openai",
	"openai-compatible", "openrouter", "perplexity", "together", "xai",
}

func TestProviderIDs(t *testing.T) {
	ps := Providers()
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.ID
	}
	if !slices.Equal(ids, wantProviderIDs) {
		t.Fatalf("provider IDs = %v, want %v", ids, wantProviderIDs)
	}
	if !slices.IsSorted(ids) {
		t.Errorf("provider IDs not sorted: %v", ids)
	}
	if len(slices.Compact(slices.Clone(ids))) != len(ids) {
		t.Errorf("duplicate provider IDs: %v", ids)
	}
}

func TestProviderFields(t *testing.T) {
	schemas := []string{SchemaOpenAI, SchemaAnthropic, SchemaGemini, SchemaBedrock, SchemaAzure, SchemaCohere}
	for _, p := range Providers() {
		if p.Name == "" {
			t.Errorf("%s: empty Name", p.ID)
		}
		if !slices.Contains(schemas, p.Schema) {
			t.Errorf("%s: unknown schema %q", p.ID, p.Schema)
		}
		switch {
		case p.BaseURLRequired && p.DefaultBaseURL != "":
			t.Errorf("%s: BaseURLRequired but DefaultBaseURL = %q", p.ID, p.DefaultBaseURL)
		case !p.BaseURLRequired && p.ID != "bedrock" && p.DefaultBaseURL == "":
			t.Errorf("%s: no DefaultBaseURL and BaseURLRequired is false", p.ID)
		}
		if !p.Capabilities.Chat {
			t.Errorf("%s: every provider should serve chat", p.ID)
		}
	}
	if b, _ := LookupProvider("bedrock"); b.BaseURLRequired || b.DefaultBaseURL != "" {
		t.Errorf("bedrock: want region-derived endpoint, got %+v", b)
	}
	for _, id := range []string{"azure-openai", "openai-compatible"} {
		if p, _ := LookupProvider(id); !p.BaseURLRequired {
			t.Errorf("%s: BaseURLRequired = false, want true", id)
		}
	}
}

func TestLookupProvider(t *testing.T) {
	p, ok := LookupProvider("openai")
	if !ok || p.DefaultBaseURL != "https://api.openai.com/v1" || p.Schema != SchemaOpenAI {
		t.Errorf("LookupProvider(openai) = %+v, %v", p, ok)
	}
	if _, ok := LookupProvider("nope"); ok {
		t.Error("LookupProvider(nope) reported found")
	}
	for _, want := range Providers() {
		got, ok := LookupProvider(want.ID)
		if !ok || got != want {
			t.Errorf("LookupProvider(%s) = %+v, %v; want %+v", want.ID, got, ok, want)
		}
	}
}

func TestProvidersReturnsCopy(t *testing.T) {
	a := Providers()
	orig := a[0]
	a[0].ID = "mutated"
	a[0].Capabilities.Chat = !a[0].Capabilities.Chat
	if b := Providers(); b[0] != orig {
		t.Errorf("mutating Providers() result changed next call: %+v", b[0])
	}
	if p, _ := LookupProvider(orig.ID); p != orig {
		t.Errorf("mutating Providers() result changed LookupProvider: %+v", p)
	}
}

func TestModels(t *testing.T) {
	ms := Models()
	if len(ms) < 60 {
		t.Errorf("only %d models", len(ms))
	}
	seen := map[[2]string]bool{}
	for i, m := range ms {
		key := [2]string{m.Provider, m.ID}
		if seen[key] {
			t.Errorf("duplicate model %s/%s", m.Provider, m.ID)
		}
		seen[key] = true
		if i > 0 {
			prev := ms[i-1]
			if prev.Provider > m.Provider || (prev.Provider == m.Provider && prev.ID > m.ID) {
				t.Errorf("models not sorted at %s/%s", m.Provider, m.ID)
			}
		}
		prov, ok := LookupProvider(m.Provider)
		if !ok {
			t.Errorf("%s/%s: unknown provider", m.Provider, m.ID)
			continue
		}
		if m.Name == "" || m.ContextWindow <= 0 || m.MaxOutput < 0 {
			t.Errorf("%s/%s: bad fields %+v", m.Provider, m.ID, m)
		}
		c := m.Capabilities
		switch m.Kind {
		case KindChat:
			if !c.Chat || c.Embeddings || c.Completions {
				t.Errorf("%s/%s: chat model with capabilities %+v", m.Provider, m.ID, c)
			}
		case KindEmbedding:
			if c != (Capabilities{Embeddings: true}) || m.MaxOutput != 0 {
				t.Errorf("%s/%s: embedding model with capabilities %+v", m.Provider, m.ID, c)
			}
		case KindCompletion:
			if !c.Completions || c.Chat || c.Embeddings {
				t.Errorf("%s/%s: completion model with capabilities %+v", m.Provider, m.ID, c)
			}
		default:
			t.Errorf("%s/%s: invalid kind %q", m.Provider, m.ID, m.Kind)
		}
		if !capsSubset(c, prov.Capabilities) {
			t.Errorf("%s/%s: capabilities %+v exceed provider's %+v", m.Provider, m.ID, c, prov.Capabilities)
		}
	}

	ms[0].ID = "mutated"
	if Models()[0].ID == "mutated" {
		t.Error("mutating Models() result changed next call")
	}
}

func capsSubset(a, b Capabilities) bool {
	return (!a.Chat || b.Chat) && (!a.Completions || b.Completions) &&
		(!a.Embeddings || b.Embeddings) && (!a.Streaming || b.Streaming) &&
		(!a.Tools || b.Tools) && (!a.Vision || b.Vision)
}

func TestPrices(t *testing.T) {
	ps := Prices()
	if len(ps) < 70 {
		t.Errorf("only %d prices", len(ps))
	}
	models := map[[2]string]Model{}
	for _, m := range Models() {
		models[[2]string{m.Provider, m.ID}] = m
	}
	seen := map[[2]string]bool{}
	perProvider := map[string]int{}
	for i, p := range ps {
		key := [2]string{p.Provider, p.Model}
		name := p.Provider + "/" + p.Model
		if seen[key] {
			t.Errorf("duplicate price %s", name)
		}
		seen[key] = true
		perProvider[p.Provider]++
		if i > 0 {
			prev := ps[i-1]
			if prev.Provider > p.Provider || (prev.Provider == p.Provider && prev.Model > p.Model) {
				t.Errorf("prices not sorted at %s", name)
			}
		}
		if _, ok := LookupProvider(p.Provider); !ok {
			t.Errorf("%s: unknown provider", name)
		}
		if p.InputPerMTok < 0 || p.OutputPerMTok < 0 || p.CachedInputPerMTok < 0 {
			t.Errorf("%s: negative price %+v", name, p)
		}
		if p.CachedInputPerMTok > p.InputPerMTok {
			t.Errorf("%s: cached input %v exceeds input %v", name, p.CachedInputPerMTok, p.InputPerMTok)
		}
		if p.DeprecatedAt != nil && p.SunsetAt != nil && !p.SunsetAt.After(*p.DeprecatedAt) {
			t.Errorf("%s: SunsetAt %v not after DeprecatedAt %v", name, p.SunsetAt, p.DeprecatedAt)
		}
		historical := p.DeprecatedAt != nil || p.SunsetAt != nil
		m, inCatalog := models[key]
		switch {
		case !inCatalog && !historical:
			t.Errorf("%s: priced but missing from Models()", name)
		case inCatalog && m.Kind == KindEmbedding && p.OutputPerMTok != 0:
			t.Errorf("%s: embedding model with output price", name)
		}
	}
	for _, prov := range []string{"openai", "anthropic", "google", "mistral", "groq", "deepseek", "xai", "cohere"} {
		if perProvider[prov] < 3 {
			t.Errorf("%s: %d priced models, want at least 3", prov, perProvider[prov])
		}
	}
	for key := range models {
		if !seen[key] {
			t.Errorf("%s/%s: in Models() but has no price", key[0], key[1])
		}
	}
}

func TestPricesDatesUTC(t *testing.T) {
	for _, p := range Prices() {
		if p.DeprecatedAt != nil && p.DeprecatedAt.Location().String() != "UTC" {
			t.Errorf("%s/%s: DeprecatedAt not UTC", p.Provider, p.Model)
		}
		if p.SunsetAt != nil && p.SunsetAt.Location().String() != "UTC" {
			t.Errorf("%s/%s: SunsetAt not UTC", p.Provider, p.Model)
		}
	}
}

func TestPricesReturnsCopy(t *testing.T) {
	a := Prices()
	idx := slices.IndexFunc(a, func(p Price) bool { return p.SunsetAt != nil })
	if idx < 0 {
		t.Fatal("no price with a SunsetAt")
	}
	orig := *a[idx].SunsetAt
	*a[idx].SunsetAt = orig.AddDate(10, 0, 0)
	a[idx].InputPerMTok = -1
	b := Prices()
	if !b[idx].SunsetAt.Equal(orig) || b[idx].InputPerMTok < 0 {
		t.Errorf("mutating Prices() result changed next call: %+v", b[idx])
	}
}

func TestKnownPrices(t *testing.T) {
	tests := []struct {
		provider, model   string
		in, out, cachedIn float64
	}{
		{"openai", "gpt-4o", 2.50, 10.00, 1.25},
		{"openai", "gpt-4o-mini", 0.15, 0.60, 0.075},
		{"anthropic", "claude-sonnet-4-5", 3, 15, 0.30},
		{"anthropic", "claude-opus-4-1", 15, 75, 1.50},
		{"google", "gemini-2.5-pro", 1.25, 10, 0.125},
	}
	ps := Prices()
	for _, tt := range tests {
		i := slices.IndexFunc(ps, func(p Price) bool { return p.Provider == tt.provider && p.Model == tt.model })
		if i < 0 {
			t.Errorf("%s/%s: no price", tt.provider, tt.model)
			continue
		}
		if p := ps[i]; p.InputPerMTok != tt.in || p.OutputPerMTok != tt.out || p.CachedInputPerMTok != tt.cachedIn {
			t.Errorf("%s/%s = %v/%v cached %v, want %v/%v cached %v", tt.provider, tt.model,
				p.InputPerMTok, p.OutputPerMTok, p.CachedInputPerMTok, tt.in, tt.out, tt.cachedIn)
		}
	}
}
