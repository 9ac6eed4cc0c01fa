package admin

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/internal/testenv"
)

// mustBox returns a box whose 32-byte key is fill repeated.
func mustBox(t *testing.T, fill byte) *secret.Box {
	t.Helper()
	b, err := secret.NewBox(bytes.Repeat([]byte{fill}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// dumpStore returns every value of every table of st as text: what a
// database dump would hold.
func dumpStore(t *testing.T, st *store.Store) string {
	t.Helper()
	ctx := context.Background()
	var tables []string
	q := `SELECT name FROM sqlite_master WHERE type = 'table'`
	if st.Postgres() {
		q = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`
	}
	rows, err := st.DB.QueryContext(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, tb := range tables {
		rows, err := st.DB.QueryContext(ctx, fmt.Sprintf(`SELECT * FROM %q`, tb))
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				out.WriteString(v.String)
				out.WriteByte('\n')
			}
		}
		_ = rows.Close()
	}
	return out.String()
}

// TestMasterKeyRotation checks defect 16c of issue 12 and security
// checklist item 29, on SQLite and PostgreSQL: provider keys are sealed at
// rest with the master key's id and a database dump holds no piece of
// them; after a rotation (new key current, old key previous) every key
// still opens; Reseal moves them all to the new key in one transaction,
// reporting counts only, and running it again changes nothing; afterwards
// the new key alone opens them; a key that opens with neither key makes
// Reseal change nothing.
func TestMasterKeyRotation(t *testing.T) {
	for _, b := range testenv.Backends {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			st := testenv.Store(t, b)
			oldBox, newBox := mustBox(t, 1), mustBox(t, 2)
			svc := func(box *secret.Box) *Service {
				s, err := New(Config{Store: st, Box: box, AllowPrivateBaseURLs: true})
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			before := svc(oldBox)
			admin := platformAdmin(t, before)
			g := mkGateway(t, before, admin, "acme")
			canaries := map[string]string{
				"main":   "sk-proj-CANARYrotation0000000000000001WXYZ",
				"backup": "sk-proj-CANARYrotation0000000000000002WXYZ",
				"third":  "sk-proj-CANARYrotation0000000000000003WXYZ",
			}
			for alias, key := range canaries {
				if _, err := before.CreateKey(ctx, admin, g.ID, KeyInput{Provider: "openai", Alias: alias, Key: key}); err != nil {
					t.Fatal(err)
				}
			}
			sealedWith := func(want string) {
				t.Helper()
				ks, err := store.All[store.ProviderKey](ctx, st.DB, "id")
				if err != nil {
					t.Fatal(err)
				}
				for _, k := range ks {
					if got := sealedKeyID(k.SealedKey); got != want {
						t.Fatalf("key %s sealed with key id %q, want %q", k.Alias, got, want)
					}
				}
			}
			noCanary := func(when string) {
				t.Helper()
				dump := dumpStore(t, st)
				for _, key := range canaries {
					for _, piece := range canaryPieces(key) {
						if strings.Contains(dump, piece) {
							t.Fatalf("%s: the database dump holds %q of a provider key", when, piece)
						}
					}
				}
			}
			opens := func(s *Service) {
				t.Helper()
				got, err := providerKeys(ctx, s)
				if err != nil {
					t.Fatal(err)
				}
				if len(got[g.ID]) != len(canaries) {
					t.Fatalf("%d of %d keys open", len(got[g.ID]), len(canaries))
				}
				for _, k := range got[g.ID] {
					if k.Secret.Reveal() != canaries[k.Alias] {
						t.Fatalf("key %s opens to another value", k.Alias)
					}
				}
			}
			sealedWith(oldBox.KeyID())
			noCanary("before the rotation")

			// The new key alone opens nothing; with the old one as previous,
			// everything.
			if got, _ := providerKeys(ctx, svc(newBox)); len(got[g.ID]) != 0 {
				t.Fatalf("the new key alone opened %d keys sealed with the old one", len(got[g.ID]))
			}
			rotating := svc(mustBox(t, 2).WithPrevious(mustBox(t, 1)))
			opens(rotating)

			// A key that opens with neither: Reseal changes nothing.
			stray, err := mustBox(t, 3).Seal("sk-proj-stray-0000000000000000")
			if err != nil {
				t.Fatal(err)
			}
			strayKey := &store.ProviderKey{ID: "key_stray", TenantID: "acme", GatewayID: g.ID, Provider: "openai", Alias: "stray",
				SealedKey: stray, Last4: "0000", Weight: 1, Models: store.StringList{}, CreatedAt: before.now(), UpdatedAt: before.now()}
			if err := store.Insert(ctx, st.DB, strayKey); err != nil {
				t.Fatal(err)
			}
			version, _ := st.ConfigVersion(ctx)
			if _, err := rotating.Reseal(ctx); err == nil || !strings.Contains(err.Error(), "key_stray") || strings.Contains(err.Error(), "sk-proj") {
				t.Fatalf("reseal with a stray key: %v, want an error naming key_stray and no key", err)
			}
			if v, _ := st.ConfigVersion(ctx); v != version {
				t.Fatal("a failed reseal bumped the configuration version")
			}
			if _, err := store.Delete[store.ProviderKey](ctx, st.DB, store.Eq("id", "key_stray")); err != nil {
				t.Fatal(err)
			}
			sealedWith(oldBox.KeyID())

			rep, err := rotating.Reseal(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if *rep != (ResealReport{KeyID: newBox.KeyID(), Total: 3, Resealed: 3}) {
				t.Fatalf("report %+v", rep)
			}
			sealedWith(newBox.KeyID())
			noCanary("after the reseal")
			if v, _ := st.ConfigVersion(ctx); v <= version {
				t.Fatal("the reseal did not bump the configuration version: proxies would not reload")
			}
			again, err := rotating.Reseal(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if *again != (ResealReport{KeyID: newBox.KeyID(), Total: 3, Current: 3}) {
				t.Fatalf("second reseal %+v, want nothing resealed", again)
			}
			opens(svc(newBox)) // the old key can go
			if got, _ := providerKeys(ctx, svc(oldBox)); len(got[g.ID]) != 0 {
				t.Fatalf("the old key still opens %d keys", len(got[g.ID]))
			}

			audit, err := store.All[store.AuditEntry](ctx, st.DB, "id", store.Eq("action", "keys.reseal"))
			if err != nil {
				t.Fatal(err)
			}
			if len(audit) != 2 || audit[0].ActorEmail != "cli" || fmt.Sprint(audit[0].Changes["resealed"]) != "3" {
				t.Fatalf("audit %+v, want two keys.reseal rows by cli with counts", audit)
			}
		})
	}
}

// TestResealAlertSecret: a tenant's alert signing secret is sealed with
// the master key (no database dump holds it), and Reseal moves it to the
// new key with the provider keys; it then opens with the new key alone.
func TestResealAlertSecret(t *testing.T) {
	for _, b := range testenv.Backends {
		t.Run(string(b), func(t *testing.T) {
			const canary = "whsec-CANARY-reseal-5e0c1b7d"
			ctx := context.Background()
			st := testenv.Store(t, b)
			svc := func(box *secret.Box) *Service {
				s, err := New(Config{Store: st, Box: box, AllowPrivateBaseURLs: true})
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			before := svc(mustBox(t, 1))
			admin := platformAdmin(t, before)
			mkGateway(t, before, admin, "acme")
			ts := DefaultTenantSettings()
			ts.AlertWebhookURL = "http://127.0.0.1:9/hook"
			ts.AlertWebhookSecret = ptrTo(canary)
			if _, err := before.UpdateTenant(ctx, admin, "acme", TenantPatch{Settings: &ts}); err != nil {
				t.Fatal(err)
			}
			if dump := dumpStore(t, st); strings.Contains(dump, canary) || strings.Contains(dump, "CANARY-reseal") {
				t.Fatal("the database dump holds the alert secret")
			}
			rep, err := svc(mustBox(t, 2).WithPrevious(mustBox(t, 1))).Reseal(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if *rep != (ResealReport{KeyID: mustBox(t, 2).KeyID(), Total: 1, Resealed: 1}) {
				t.Fatalf("report %+v", rep)
			}
			tn, err := store.Get[store.Tenant](ctx, st.DB, store.Eq("id", "acme"))
			if err != nil {
				t.Fatal(err)
			}
			v, err := mustBox(t, 2).Open(*tn.WebhookSecret)
			if err != nil || v.Reveal() != canary {
				t.Fatalf("the resealed secret does not open with the new key alone: %v", err)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }
