package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/internal/store"
	"github.com/sluicehq/sluice/internal/testenv"
	"github.com/sluicehq/sluice/proxy/snapshot"
)

// runCmd runs the sluice command line with args and returns its output.
func runCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	cmd := newRootCmd()
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

// TestKeysReseal rotates the master key end to end through the command
// line, on SQLite and PostgreSQL (issue 12, defect 16c): with the new key
// in SLUICE_MASTER_KEY and the old one in SLUICE_MASTER_KEY_PREVIOUS (or
// the file --master-key-previous-file names), `sluice keys reseal` seals
// every provider key with the new key and prints counts, never a key; a
// second run changes nothing; the new key alone then opens every key.
func TestKeysReseal(t *testing.T) {
	oldKey, newKey := bytes.Repeat([]byte{7}, 32), bytes.Repeat([]byte{9}, 32)
	const canary = "sk-proj-CANARYreseal0000000000000000WXYZ"
	for _, b := range testenv.Backends {
		t.Run(string(b), func(t *testing.T) {
			ctx := context.Background()
			st := testenv.Store(t, b)
			dir := t.TempDir()
			flags := []string{"--data-dir", dir}
			if b == testenv.Postgres {
				flags = []string{"--database-url", st.DSN()}
			} else {
				// The command opens the data dir's own SQLite file.
				var err error
				if st, err = store.Open(ctx, store.Config{DataDir: dir}); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = st.Close() })
				if _, err := st.Migrate(ctx); err != nil {
					t.Fatal(err)
				}
			}
			// Provider keys sealed with the old master key.
			oldBox, err := secret.NewBox(oldKey)
			if err != nil {
				t.Fatal(err)
			}
			svc, err := admin.New(admin.Config{Store: st, Box: oldBox})
			if err != nil {
				t.Fatal(err)
			}
			p, g := bootstrapAcme(t, ctx, svc)
			for _, alias := range []string{"a", "b"} {
				if _, err := svc.CreateKey(ctx, p, g.ID, admin.KeyInput{Provider: "openai", Alias: alias, Key: canary}); err != nil {
					t.Fatal(err)
				}
			}

			t.Setenv("SLUICE_MASTER_KEY", hex.EncodeToString(newKey))
			out, err := runCmd(t, append([]string{"keys", "reseal"}, flags...)...)
			if err == nil || !strings.Contains(err.Error(), "nothing was changed") {
				t.Fatalf("reseal without the previous key: %v (%s), want a refusal that changes nothing", err, out)
			}

			t.Setenv("SLUICE_MASTER_KEY_PREVIOUS", hex.EncodeToString(oldKey))
			out, err = runCmd(t, append([]string{"keys", "reseal"}, flags...)...)
			if err != nil {
				t.Fatalf("reseal: %v (%s)", err, out)
			}
			newBox, _ := secret.NewBox(newKey)
			want := "provider keys: 2, resealed with master key " + newBox.KeyID() + ": 2, already under it: 0\n"
			if out != want {
				t.Fatalf("output %q, want %q", out, want)
			}
			if strings.Contains(out, "CANARY") {
				t.Fatalf("the output shows a key: %q", out)
			}

			// Again, with the previous key in a file this time: nothing to do.
			t.Setenv("SLUICE_MASTER_KEY_PREVIOUS", "")
			keyFile := filepath.Join(t.TempDir(), "old.key")
			if err := os.WriteFile(keyFile, []byte(hex.EncodeToString(oldKey)+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			out, err = runCmd(t, append([]string{"keys", "reseal", "--master-key-previous-file", keyFile}, flags...)...)
			if err != nil || !strings.Contains(out, ": 0, already under it: 2") {
				t.Fatalf("second reseal: %v %q, want nothing resealed", err, out)
			}

			// The new key alone opens every key now: the proxy's snapshot
			// serves them all.
			snap, err := snapshot.Build(ctx, st, newBox, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			var keys []*snapshot.Key
			if gw, ok := snap.GatewayByID(g.ID); ok {
				keys = gw.Keys["openai"]
			}
			if len(keys) != 2 || len(snap.Unopened()) != 0 || keys[0].Secret.Reveal() != canary {
				t.Fatalf("after the rotation %d keys open, %d do not", len(keys), len(snap.Unopened()))
			}
		})
	}
}

// TestMasterKeyPreviousSettings checks the settings of a rotation: the
// previous key (and the current one) from the environment or a file, not
// both, and never the current key itself.
func TestMasterKeyPreviousSettings(t *testing.T) {
	cur, prev := hex.EncodeToString(bytes.Repeat([]byte{1}, 32)), hex.EncodeToString(bytes.Repeat([]byte{2}, 32))
	file := filepath.Join(t.TempDir(), "prev.key")
	if err := os.WriteFile(file, []byte(prev), 0o600); err != nil {
		t.Fatal(err)
	}
	// A compose or Kubernetes secret: the key in a file, newline-terminated.
	curFile := filepath.Join(t.TempDir(), "master.key")
	if err := os.WriteFile(curFile, []byte(cur+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		c       config
		wantErr string
	}{
		{"none", config{MasterKey: cur}, ""},
		{"environment", config{MasterKey: cur, MasterKeyPrevious: prev}, ""},
		{"file", config{MasterKey: cur, MasterKeyPreviousFile: file}, ""},
		{"both", config{MasterKey: cur, MasterKeyPrevious: prev, MasterKeyPreviousFile: file}, "not both"},
		{"same as current", config{MasterKey: cur, MasterKeyPrevious: cur}, "is the current one"},
		{"malformed", config{MasterKey: cur, MasterKeyPrevious: "nope"}, "SLUICE_MASTER_KEY_PREVIOUS"},
		{"missing file", config{MasterKey: cur, MasterKeyPreviousFile: file + ".gone"}, "--master-key-previous-file"},
		{"current from a file", config{DatabaseURL: "postgres://x", MasterKeyFile: curFile, MasterKeyPrevious: prev}, ""},
		{"current from both", config{MasterKey: cur, MasterKeyFile: curFile}, "not both"},
		{"current file same as previous", config{MasterKeyFile: curFile, MasterKeyPrevious: cur}, "is the current one"},
		{"current file malformed", config{MasterKeyFile: file + ".gone"}, "--master-key-file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.c.box()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("box: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("box: %v, want an error about %q", err, tc.wantErr)
			case err != nil && strings.Contains(err.Error(), prev):
				t.Fatalf("the error %q shows the key", err)
			}
		})
	}
	// The flag exists under the name the documentation gives, and its
	// environment variable sets it.
	cmd := serveCmd("serve", "", partsAll)
	t.Setenv("SLUICE_MASTER_KEY_PREVIOUS_FILE", file)
	if err := applyEnv(cmd.Flags()); err != nil {
		t.Fatal(err)
	}
	if f := cmd.Flags().Lookup("master-key-previous-file"); f == nil || f.Value.String() != file {
		t.Fatalf("--master-key-previous-file from SLUICE_MASTER_KEY_PREVIOUS_FILE: %v", f)
	}
}

// TestPrivateUpstreamsSwitchIsNamed checks that the refusal of a loopback
// base_url names a switch that exists (issue 12, defect 18): the flag and
// its environment variable.
func TestPrivateUpstreamsSwitchIsNamed(t *testing.T) {
	cmd := serveCmd("serve", "", partsAll)
	if cmd.Flags().Lookup("allow-private-upstreams") == nil {
		t.Fatal("no --allow-private-upstreams flag")
	}
	ctx := context.Background()
	box, _ := secret.NewBox(make([]byte, 32))
	svc, err := admin.New(admin.Config{Store: testenv.Store(t, testenv.SQLite), Box: box})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Bootstrap(ctx, testAdminToken); err != nil {
		t.Fatal(err)
	}
	p := &auth.Principal{UserID: "usr_cli", Role: auth.Administrator, TenantID: "platform"}
	g, err := svc.CreateGateway(ctx, p, "platform", admin.GatewayInput{Slug: "local"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.CreateKey(ctx, p, g.ID, admin.KeyInput{Provider: "ollama", Alias: "local", Key: "ollama", BaseURL: "http://127.0.0.1:11434/v1"})
	if err == nil || !strings.Contains(err.Error(), "--allow-private-upstreams") || !strings.Contains(err.Error(), "SLUICE_ALLOW_PRIVATE_UPSTREAMS") {
		t.Fatalf("refusal %v does not name --allow-private-upstreams and SLUICE_ALLOW_PRIVATE_UPSTREAMS", err)
	}
}

// bootstrapAcme bootstraps svc with the test admin token and creates the
// tenant acme and its gateway prod as the administrator; it returns the
// administrator and the gateway.
func bootstrapAcme(t *testing.T, ctx context.Context, svc *admin.Service) (*auth.Principal, *store.Gateway) {
	t.Helper()
	if _, _, err := svc.Bootstrap(ctx, testAdminToken); err != nil {
		t.Fatal(err)
	}
	p, err := svc.Authenticate(ctx, testAdminToken)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTenant(ctx, p, admin.TenantInput{ID: "acme"}); err != nil {
		t.Fatal(err)
	}
	g, err := svc.CreateGateway(ctx, p, "acme", admin.GatewayInput{Slug: "prod"})
	if err != nil {
		t.Fatal(err)
	}
	return p, g
}
