package snapshot

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/internal/testenv"
)

// TestKeysOpen: the snapshot opens the provider keys it reads with its
// box. During a master-key rotation (the new key with the previous one)
// keys sealed with the previous key still open; a key that opens with
// neither is left out and reported by id, and the other keys still serve.
func TestKeysOpen(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		e := newEnv(t, b, nil) // e.box seals what the service writes: the "old" master key
		e.tenant(t, "acme")
		g := e.gateway(t, "acme", "prod")
		secrets := map[string]string{"main": "sk-proj-main-0123456789abcdef", "backup": "sk-proj-backup-0123456789abcdef"}
		for alias, key := range secrets {
			try(e.svc.CreateKey(ctx, e.admin, g.ID, admin.KeyInput{Provider: "openai", Alias: alias, Key: key})).must(t)
		}
		stray, err := box(t, 3).Seal("sk-proj-stray-0123456789abcdef")
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC().Truncate(time.Microsecond)
		if err := store.Insert(ctx, e.st.DB, &store.ProviderKey{ID: "key_stray", TenantID: "acme", GatewayID: g.ID,
			Provider: "openai", Alias: "stray", SealedKey: stray, Last4: "cdef", Weight: 1, Models: store.StringList{},
			CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}

		for _, tc := range []struct {
			name     string
			box      Opener
			open     []string // aliases
			unopened []string
		}{
			{"the sealing key", e.box, []string{"backup", "main"}, []string{"stray"}},
			{"a rotation: new and previous", box(t, 2).WithPrevious(e.box), []string{"backup", "main"}, []string{"stray"}},
			{"another key alone", box(t, 2), nil, []string{"backup", "main", "stray"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				s := try(Build(ctx, e.st, tc.box, time.Now())).must(t)
				gw, ok := s.Gateway("acme", "prod")
				if !ok {
					t.Fatal("gateway acme/prod not in the snapshot")
				}
				var open []string
				for _, k := range gw.Keys["openai"] {
					open = append(open, k.Alias)
					if k.Secret.Reveal() != secrets[k.Alias] {
						t.Errorf("key %s opens to another value", k.Alias)
					}
				}
				var unopened []string
				for _, k := range s.Unopened() {
					unopened = append(unopened, k.Alias)
					if k.ID == "" || k.GatewayID != g.ID || k.Err == nil {
						t.Errorf("unopened key %+v, want its id, gateway and error", k)
					}
				}
				if diff := cmp.Diff(tc.open, open); diff != "" {
					t.Errorf("opened keys (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tc.unopened, sortedStrings(unopened)); diff != "" {
					t.Errorf("unopened keys (-want +got):\n%s", diff)
				}
			})
		}

		// The Holder logs a key left out by id, never its value.
		var logs syncBuffer
		h := NewHolder(HolderConfig{Store: e.st, Box: e.box, Poll: time.Hour, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		start(t, h)
		ready(t, h)
		out := logs.String()
		if !strings.Contains(out, "provider key does not open") || !strings.Contains(out, "key_id=key_stray") {
			t.Errorf("log %q, want the stray key left out by id", out)
		}
		if strings.Contains(out, "sk-proj") {
			t.Errorf("log %q holds a provider key", out)
		}
	})
}

func box(t *testing.T, b byte) *secret.Box {
	t.Helper()
	return try(secret.NewBox(bytes.Repeat([]byte{b}, 32))).must(t)
}

func sortedStrings(s []string) []string {
	slices.Sort(s)
	return s
}

// TestKeyRotation: a key's weight change and its retirement (disabled)
// reach the snapshot without deleting the key: a disabled key is left out
// (the proxy sends nothing with it), enabling it again brings it back.
func TestKeyRotation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		e := newEnv(t, b, nil)
		e.tenant(t, "acme")
		g := e.gateway(t, "acme", "prod")
		for _, alias := range []string{"old", "new"} {
			try(e.svc.CreateKey(ctx, e.admin, g.ID, admin.KeyInput{Provider: "openai", Alias: alias, Key: "sk-proj-" + alias + "-0123456789abcdef"})).must(t)
		}
		keys := func() map[string]int {
			s := try(Build(ctx, e.st, e.box, time.Now())).must(t)
			gw, _ := s.Gateway("acme", "prod")
			out := map[string]int{}
			for _, k := range gw.Keys["openai"] {
				out[k.Alias] = k.Weight
			}
			return out
		}
		w, on, off := 9, false, true
		try(e.svc.UpdateKey(ctx, e.admin, g.ID, "openai", "new", admin.KeyPatch{Weight: &w})).must(t)
		if d := cmp.Diff(map[string]int{"old": 1, "new": 9}, keys()); d != "" {
			t.Errorf("keys after the weight shift (-want +got):\n%s", d)
		}
		try(e.svc.UpdateKey(ctx, e.admin, g.ID, "openai", "old", admin.KeyPatch{Disabled: &off})).must(t)
		if d := cmp.Diff(map[string]int{"new": 9}, keys()); d != "" {
			t.Errorf("keys after retiring old (-want +got):\n%s", d)
		}
		try(e.svc.UpdateKey(ctx, e.admin, g.ID, "openai", "old", admin.KeyPatch{Disabled: &on})).must(t)
		if d := cmp.Diff(map[string]int{"old": 1, "new": 9}, keys()); d != "" {
			t.Errorf("keys after enabling old again (-want +got):\n%s", d)
		}
	})
}
