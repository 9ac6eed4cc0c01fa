package admin

import "testing"

// TestModelKinds: the Playground tells embedding models from chat models
// by the catalog, and by the name for models the catalog does not know.
func TestModelKinds(t *testing.T) {
	kindOf := modelKinds()
	for _, tt := range []struct{ provider, model, want string }{
		{"openai", "text-embedding-3-small", "embedding"},
		{"openai", "gpt-4o-mini", "chat"},
		{"mistral", "mistral-embed", "embedding"},
		{"custom", "my-Embedding-v2", "embedding"},
		{"custom", "my-chat-model", "chat"},
	} {
		if got := kindOf(tt.provider, tt.model); got != tt.want {
			t.Errorf("kind of %s/%s: got %q, want %q", tt.provider, tt.model, got, tt.want)
		}
	}
}
