package admin

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/internal/testenv"
)

// TestTokenCaps checks defect 16d of issue 12: personal (user) tokens and
// playground tokens could be minted without limit. A user holds at most
// maxUserTokens API tokens, however minted, and maxPlaygroundTokens
// unexpired playground tokens; the refusals say what to do.
func TestTokenCaps(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		g := mkGateway(t, s, admin, "acme")
		m, err := s.CreateUser(ctx, admin, "acme", UserInput{Email: "m@acme.test", Role: auth.Member})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AssignGateway(ctx, admin, m.ID, g.ID); err != nil {
			t.Fatal(err)
		}
		me := principalOf(m)

		var first string
		for i := range maxUserTokens {
			var ct *CreatedToken
			if i%2 == 0 {
				ct, err = s.CreateMyToken(ctx, me, TokenInput{Name: "mine"})
			} else {
				ct, err = s.CreateUserToken(ctx, admin, m.ID, TokenInput{Name: "given"})
			}
			if err != nil {
				t.Fatalf("token %d: %v", i+1, err)
			}
			if i == 0 {
				first = ct.ID
			}
		}
		_, err = s.CreateMyToken(ctx, me, TokenInput{Name: "one too many"})
		wantCode(t, err, 409, "token_limit_reached")
		if ae, _ := apierr.From(err); !strings.Contains(ae.Message, "DELETE /admin/v1/me/tokens/{id}") {
			t.Fatalf("the refusal %q does not say what to do", ae.Message)
		}
		_, err = s.CreateUserToken(ctx, admin, m.ID, TokenInput{Name: "one too many"})
		wantCode(t, err, 409, "token_limit_reached")
		// A revoked token still counts until it is deleted.
		yes := true
		if _, err := s.UpdateUserToken(ctx, admin, m.ID, first, TokenPatch{Revoked: &yes}); err != nil {
			t.Fatal(err)
		}
		_, err = s.CreateMyToken(ctx, me, TokenInput{Name: "one too many"})
		wantCode(t, err, 409, "token_limit_reached")
		if err := s.DeleteMyToken(ctx, me, first); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreateMyToken(ctx, me, TokenInput{Name: "room again"}); err != nil {
			t.Fatalf("after a delete: %v", err)
		}

		// Playground tokens: at most maxPlaygroundTokens unexpired ones.
		now := s.now()
		s.cfg.Now = func() time.Time { return now }
		for i := range maxPlaygroundTokens {
			if _, err := s.CreatePlaygroundToken(ctx, me, g.ID); err != nil {
				t.Fatalf("playground token %d: %v", i+1, err)
			}
		}
		_, err = s.CreatePlaygroundToken(ctx, me, g.ID)
		wantCode(t, err, 429, "rate_limit_exceeded")
		if ae, _ := apierr.From(err); !strings.Contains(ae.Message, "reuse one") {
			t.Fatalf("the refusal %q does not say what to do", ae.Message)
		}
		// Another user is not affected.
		if _, err := s.CreatePlaygroundToken(ctx, admin, g.ID); err != nil {
			t.Fatalf("the Administrator's playground token: %v", err)
		}
		// Once they expire, they make room and are deleted.
		now = now.Add(playgroundTokenTTL)
		if _, err := s.CreatePlaygroundToken(ctx, me, g.ID); err != nil {
			t.Fatalf("after expiry: %v", err)
		}
		n, err := store.Count[store.Token](ctx, s.db, store.Eq("user_id", m.ID), store.Eq("kind", store.TokenPlayground))
		if err != nil || n != 1 {
			t.Fatalf("%d playground tokens of the user left, want 1 (%v)", n, err)
		}
	})
}

// TestLocalUpstreamKeys checks defect 18 of issue 12: Ollama and
// self-hosted OpenAI-compatible servers take any key or none, so their
// keys may be short or empty; a loopback base_url refused because private
// upstreams are off names the switch that allows them.
func TestLocalUpstreamKeys(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		admin := platformAdmin(t, s)
		g := mkGateway(t, s, admin, "acme")
		for _, in := range []KeyInput{
			{Provider: "ollama", Alias: "ollama", Key: "ollama", BaseURL: "http://127.0.0.1:11434/v1"},
			{Provider: "ollama", Alias: "nokey", BaseURL: "http://127.0.0.1:11434/v1"},
			{Provider: "openai-compatible", Alias: "vllm", Key: "EMPTY", BaseURL: "http://127.0.0.1:8000/v1"},
			{Provider: "openai-compatible", Alias: "blank", Key: "  ", BaseURL: "http://127.0.0.1:8000/v1"},
		} {
			if _, err := s.CreateKey(ctx, admin, g.ID, in); err != nil {
				t.Fatalf("%s key %q: %v", in.Provider, in.Key, err)
			}
		}
		keys, err := providerKeys(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, k := range keys[g.ID] {
			got[k.Alias] = k.Secret.Reveal()
		}
		if got["ollama"] != "ollama" || got["nokey"] != "" || got["vllm"] != "EMPTY" || got["blank"] != "" {
			t.Fatalf("stored keys %v", got)
		}
		// Hosted providers still need a real key.
		_, err = s.CreateKey(ctx, admin, g.ID, KeyInput{Provider: "openai", Alias: "short", Key: "EMPTY"})
		wantErrParam(t, err, 400, "invalid_request", "key")
		_, err = s.CreateKey(ctx, admin, g.ID, KeyInput{Provider: "openai", Alias: "none"})
		wantErrParam(t, err, 400, "invalid_request", "key")
	})

	box, err := secret.NewBox(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: testenv.Store(t, testenv.SQLite), Box: box}) // private upstreams off
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	admin := platformAdmin(t, s)
	g := mkGateway(t, s, admin, "acme")
	for _, base := range []string{"http://127.0.0.1:11434/v1", "http://[::1]:8000/v1", "http://10.1.2.3/v1", "http://vllm.internal/v1"} {
		_, err := s.CreateKey(ctx, admin, g.ID, KeyInput{Provider: "ollama", Alias: "local", Key: "ollama", BaseURL: base})
		wantErrParam(t, err, 400, "invalid_request", "base_url")
		if !strings.Contains(err.Error(), "--allow-private-upstreams") || !strings.Contains(err.Error(), "SLUICE_ALLOW_PRIVATE_UPSTREAMS") {
			t.Fatalf("refusal of %s: %q does not name the switch", base, err)
		}
	}
	// Addresses the switch does not allow do not name it.
	_, err = s.CreateKey(ctx, admin, g.ID, KeyInput{Provider: "ollama", Alias: "meta", Key: "ollama", BaseURL: "http://169.254.169.254/"})
	if err == nil || strings.Contains(err.Error(), "allow-private") {
		t.Fatalf("link-local refusal %v names the switch, which would not allow it", err)
	}
}
