//go:build linux

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/internal/declarative"
	"github.com/sluicehq/sluice/internal/declarative/schemacheck"
	"github.com/sluicehq/sluice/internal/testenv"
)

// Canary values of the example's provider keys, of its tenant's alert
// webhook secret and of a user's password: none may ever appear in an
// export, in apply's output or in a server's log.
const (
	canaryOpenAIKey    = "sk-proj-CANARYopenai00000000000000000000WXYZ"
	canaryAnthropicKey = "sk-ant-CANARYanthropic0000000000000000ABCD"
	canaryAlertSecret  = "whsec-CANARYalert000000000000000000000EFGH"
	canaryPassword     = "CANARY-password-horse-battery"
)

var secretLine = regexp.MustCompile(`secret: "(sk-sl-[A-Za-z0-9]{40})"`)

// exportFile runs `sluice export` against base into a file and returns it.
func exportFile(t *testing.T, base string) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "export.yaml")
	if out, err := runCmd(t, "export", "--server", base, "-o", path); err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := schemacheck.Check(data); err != nil {
		t.Fatalf("the export does not validate against the schema: %v", err)
	}
	return data
}

// applyFile runs `sluice apply` against base and returns its output.
func applyFile(t *testing.T, base, file string, flags ...string) (string, error) {
	t.Helper()
	return runCmd(t, append([]string{"apply", "-f", file, "--server", base}, flags...)...)
}

// secretsIn returns the token secrets of a --secrets-out file and checks
// its mode.
func secretsIn(t *testing.T, path string) []string {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("secrets file mode %v, want 0600", fi.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	var out []string
	for _, m := range secretLine.FindAllStringSubmatch(string(data), -1) {
		out = append(out, m[1])
	}
	return out
}

// mustNotContain fails when data holds any of the values.
func mustNotContain(t *testing.T, what string, data []byte, values ...string) {
	t.Helper()
	for _, v := range values {
		if v != "" && bytes.Contains(data, []byte(v)) {
			t.Fatalf("%s contains a secret value (%.12s…)", what, v)
		}
	}
}

// TestExportApplyRoundTrip drives `sluice export` and `sluice apply`
// (CONTRACT §15) against two real `sluice serve` processes, one on SQLite
// and one on PostgreSQL: the complete example is applied to the first, its
// export applied to the fresh second one, and the second export is byte
// for byte the first; no key value, token secret or password shows; the
// writes are in the audit log; the second apply plans nothing; a Member's
// token is refused and changes nothing; --dry-run changes nothing; a
// rotated key value is replaced; --prune deletes exactly what was taken
// out of the file, never the caller or its token.
func TestExportApplyRoundTrip(t *testing.T) {
	work := t.TempDir()
	a := startSluice(t, filepath.Join(work, "a"), freePort(t), "", filepath.Join(work, "a.log"))
	// B on PostgreSQL: the file carries a configuration from one store to the other.
	pg := testenv.Store(t, testenv.Postgres) // a fresh schema, dropped at the end
	b := startSluiceEnv(t, []string{"SLUICE_MASTER_KEY=" + strings.Repeat("cd", 32)}, filepath.Join(work, "b"), freePort(t), "",
		filepath.Join(work, "b.log"), "--database-url", pg.DSN())
	t.Chdir(work) // the example's file: key_ref is relative to the working directory
	if err := os.WriteFile("anthropic.key", []byte(canaryAnthropicKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SLUICE_KEY_ACME_PROD_OPENAI_MAIN", canaryOpenAIKey)
	t.Setenv("SLUICE_ALERT_SECRET_ACME", canaryAlertSecret)
	t.Setenv("SLUICE_TOKEN", testAdminToken)
	example, err := filepath.Abs(filepath.Join(filepath.Dir(schemacheck.SchemaPath()), "sluice-config.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}

	// The example onto server A: a token to create needs --secrets-out.
	if out, err := applyFile(t, a.base, example); err == nil || !strings.Contains(err.Error(), "--secrets-out") {
		t.Fatalf("apply creating tokens without --secrets-out: %v\n%s", err, out)
	}
	if got := exportFile(t, a.base); bytes.Contains(got, []byte("id: acme")) {
		t.Fatal("the refused apply changed the server")
	}
	secretsA := filepath.Join(work, "secrets-a.yaml")
	out, err := applyFile(t, a.base, example, "--secrets-out", secretsA)
	if err != nil {
		t.Fatalf("apply the example: %v\n%s", err, out)
	}
	for _, want := range []string{"create tenant acme", "create key acme/prod/openai/main", "create assignment acme/dana@acme.example → prod",
		"create token acme/prod/ci", "Plan: 13 to create, 0 to update, 0 to replace, 0 to delete."} {
		if !strings.Contains(out, want) {
			t.Fatalf("plan lacks %q:\n%s", want, out)
		}
	}
	secrets := secretsIn(t, secretsA)
	if len(secrets) != 2 {
		t.Fatalf("secrets file holds %d secrets, want 2 (ci, laptop)", len(secrets))
	}
	mustNotContain(t, "apply's output", []byte(out), append(secrets, canaryOpenAIKey, canaryAnthropicKey, canaryAlertSecret)...)
	// A password, set through the API (a file never carries one).
	dana := idIn(t, a.base, "/admin/v1/tenants/acme/users", "email", "dana@acme.example")
	call(t, a.base, "PATCH", "/admin/v1/users/"+dana, `{"password":"`+canaryPassword+`"}`, 200)

	exportA := exportFile(t, a.base)
	if !bytes.Contains(exportA, []byte("alert_webhook_secret_ref: env:SLUICE_ALERT_SECRET_ACME\n")) {
		t.Fatalf("the export does not name the alert webhook secret:\n%.400s", exportA)
	}
	mustNotContain(t, "the export", exportA, append(secrets, canaryOpenAIKey, canaryAnthropicKey, canaryAlertSecret, canaryPassword, testAdminToken)...)
	if out, err := applyFile(t, a.base, example); err != nil || !strings.Contains(out, "No changes") {
		t.Fatalf("the example again on A: %v\n%s, want no changes", err, out)
	}

	// A Tenant Administrator exports its own tenant only, and its export
	// applies as no change; a Member may not export.
	ops := idIn(t, a.base, "/admin/v1/tenants/acme/users", "email", "ops@acme.example")
	gitops := call(t, a.base, "POST", "/admin/v1/users/"+ops+"/tokens", `{"name":"gitops"}`, 201)["secret"].(string)
	t.Setenv("SLUICE_TOKEN", gitops)
	exportTA := exportFile(t, a.base)
	if bytes.Contains(exportTA, []byte("id: platform")) || !bytes.Contains(exportTA, []byte("  - id: acme\n")) ||
		!bytes.Contains(exportTA, []byte("model_prices:")) {
		t.Fatalf("a Tenant Administrator's export is not its tenant and the prices:\n%.300s", exportTA)
	}
	fileTA := filepath.Join(work, "ta.yaml")
	if err := os.WriteFile(fileTA, exportTA, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SLUICE_KEY_ACME_PROD_ANTHROPIC_BACKUP", canaryAnthropicKey)
	if out, err := applyFile(t, a.base, fileTA); err != nil || !strings.Contains(out, "No changes") {
		t.Fatalf("a Tenant Administrator applies its export: %v\n%s, want no changes", err, out)
	}
	// --prune never deletes the caller or the token apply runs with.
	withoutSelf := edit(t, exportTA, func(root declarative.Object) {
		find(t, root, "tenants", "id", "acme", "users", "email", "ops@acme.example")["tokens"] = []any{}
	})
	if err := os.WriteFile(fileTA, withoutSelf, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := applyFile(t, a.base, fileTA, "--prune"); err != nil || !strings.Contains(out, "No changes") {
		t.Fatalf("a prune that would delete the caller's own token: %v\n%s, want no changes", err, out)
	}
	withoutSelf = edit(t, exportTA, func(root declarative.Object) {
		acme := find(t, root, "tenants", "id", "acme")
		acme["users"] = drop(t, acme["users"], "email", "ops@acme.example")
	})
	if err := os.WriteFile(fileTA, withoutSelf, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := applyFile(t, a.base, fileTA, "--prune"); err != nil || !strings.Contains(out, "No changes") {
		t.Fatalf("a prune that would delete the caller: %v\n%s, want no changes", err, out)
	}
	t.Setenv("SLUICE_TOKEN", secrets[1]) // Dana's (a Member) laptop token
	if out, err := runCmd(t, "export", "--server", a.base, "-o", filepath.Join(work, "member.yaml")); err == nil ||
		!strings.Contains(err.Error(), "403") {
		t.Fatalf("a Member's export: %v\n%s, want a 403", err, out)
	}
	t.Setenv("SLUICE_TOKEN", testAdminToken)
	exportA = exportFile(t, a.base) // with the gitops token
	mustNotContain(t, "the export", exportA, append(secrets, gitops, canaryOpenAIKey, canaryAnthropicKey, canaryAlertSecret, canaryPassword, testAdminToken)...)

	// --tenant narrows an export to one tenant.
	one := filepath.Join(work, "one.yaml")
	if out, err := runCmd(t, "export", "--server", a.base, "--tenant", "acme", "-o", one); err != nil {
		t.Fatalf("export --tenant: %v\n%s", err, out)
	}
	if data, _ := os.ReadFile(one); bytes.Contains(data, []byte("id: platform")) || !bytes.Contains(data, []byte("  - id: acme\n")) {
		t.Fatalf("export --tenant acme:\n%.300s", data)
	}

	// The export onto a fresh server B, its keys from the environment names export chose.
	fileA := filepath.Join(work, "a.yaml")
	if err := os.WriteFile(fileA, exportA, 0o644); err != nil {
		t.Fatal(err)
	}
	secretsB := filepath.Join(work, "secrets-b.yaml")
	out, err = applyFile(t, b.base, fileA, "--secrets-out", secretsB)
	if err != nil {
		t.Fatalf("apply the export to B: %v\n%s", err, out)
	}
	mustNotContain(t, "apply's output", []byte(out), canaryOpenAIKey, canaryAnthropicKey, canaryAlertSecret)
	exportB := exportFile(t, b.base)
	if set := call(t, b.base, "GET", "/admin/v1/tenants/acme", "", 200)["settings"].(map[string]any)["alert_webhook_secret_set"]; set != true {
		t.Fatalf("B's tenant acme: alert_webhook_secret_set = %v, want true (apply sends the secret on create)", set)
	}
	if d := cmp.Diff(string(exportA), string(exportB)); d != "" {
		t.Fatalf("export of B differs from the export of A (-A +B):\n%s", d)
	}
	if out, err := applyFile(t, b.base, fileA); err != nil || !strings.Contains(out, "No changes: the server matches the file.") {
		t.Fatalf("second apply: %v\n%s, want an empty plan", err, out)
	}
	// The writes went through the admin API: the audit log holds them.
	actions := map[string]bool{}
	for _, e := range call(t, b.base, "GET", "/admin/v1/audit-log?limit=1000", "", 200)["data"].([]any) {
		actions[e.(map[string]any)["action"].(string)] = true
	}
	for _, want := range []string{"tenant.create", "gateway.create", "gateway.update", "key.create"} {
		if !actions[want] {
			t.Fatalf("the audit log of B has no %s: %v", want, actions)
		}
	}

	// An edit, as a dry run: the plan names it, the server keeps its state.
	edited := edit(t, exportA, func(root declarative.Object) {
		gw := find(t, root, "tenants", "id", "acme", "gateways", "slug", "prod")
		gw["name"] = "Production EU"
		gw["request_timeout_ms"] = int64(90000)
	})
	fileEdited := filepath.Join(work, "edited.yaml")
	if err := os.WriteFile(fileEdited, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = applyFile(t, b.base, fileEdited, "--dry-run")
	if err != nil || !strings.Contains(out, "update gateway acme/prod: name, request_timeout_ms\n") || !strings.Contains(out, "Dry run") {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	if got := exportFile(t, b.base); !bytes.Equal(got, exportB) {
		t.Fatal("--dry-run changed the server")
	}

	// A Member's token (Dana's, minted by apply) is refused; nothing changes.
	secretsOfB := secretsIn(t, secretsB) // ci (gateway), laptop (Dana, a Member), gitops (a Tenant Administrator)
	if len(secretsOfB) != 3 {
		t.Fatalf("secrets file of B holds %d secrets, want 3", len(secretsOfB))
	}
	for _, s := range secretsOfB[:2] {
		t.Setenv("SLUICE_TOKEN", s)
		out, err := applyFile(t, b.base, fileEdited)
		if err == nil {
			t.Fatalf("apply with a gateway or Member token succeeded:\n%s", out)
		}
		if !strings.Contains(err.Error(), "401") && !strings.Contains(err.Error(), "403 forbidden: the member role may not") {
			t.Fatalf("refusal %q lacks the server's message", err)
		}
	}
	t.Setenv("SLUICE_TOKEN", testAdminToken)
	if got := exportFile(t, b.base); !bytes.Equal(got, exportB) {
		t.Fatal("a refused apply changed the server")
	}

	// A new key value behind the same key_ref (a rotation): the key is
	// replaced, though a route names it, and the file then matches again.
	const rotated = "sk-proj-CANARYrotated0000000000000000000QRST"
	t.Setenv("SLUICE_KEY_ACME_PROD_OPENAI_MAIN", rotated)
	out, err = applyFile(t, b.base, fileA)
	if err != nil || !strings.Contains(out, "replace key acme/prod/openai/main: key\n") {
		t.Fatalf("apply after a key rotation: %v\n%s", err, out)
	}
	mustNotContain(t, "apply's output", []byte(out), rotated)
	keys := call(t, b.base, "GET", "/admin/v1/gateways/"+idIn(t, b.base, "/admin/v1/tenants/acme/gateways", "slug", "prod")+"/keys", "", 200)
	for _, k := range keys["data"].([]any) {
		if k := k.(map[string]any); k["alias"] == "main" && k["last4"] != "QRST" {
			t.Fatalf("key main after the rotation ends in %v, want QRST", k["last4"])
		}
	}
	if out, err := applyFile(t, b.base, fileA); err != nil || !strings.Contains(out, "No changes") {
		t.Fatalf("apply after the rotation: %v\n%s, want no changes", err, out)
	}
	if got := exportFile(t, b.base); !bytes.Equal(got, exportB) {
		t.Fatalf("the rotation changed more than the key:\n%s", cmp.Diff(string(exportB), string(got)))
	}

	// The server lost the alert webhook (and its secret): apply sends the
	// secret again with the URL, and the file then matches again.
	call(t, b.base, "PATCH", "/admin/v1/tenants/acme", `{"settings":{"log_retention_days":30,"log_bodies_default":true,`+
		`"allowed_providers":[],"alert_webhook_url":"","alert_webhook_secret":""}}`, 200)
	out, err = applyFile(t, b.base, fileA)
	if err != nil || !strings.Contains(out, "update tenant acme: settings\n") {
		t.Fatalf("apply after the webhook was removed: %v\n%s", err, out)
	}
	mustNotContain(t, "apply's output", []byte(out), canaryAlertSecret)
	if got := exportFile(t, b.base); !bytes.Equal(got, exportB) {
		t.Fatalf("the webhook was not restored as it was:\n%s", cmp.Diff(string(exportB), string(got)))
	}
	if out, err := applyFile(t, b.base, fileA); err != nil || !strings.Contains(out, "No changes") {
		t.Fatalf("apply after the webhook was restored: %v\n%s, want no changes", err, out)
	}

	// --prune deletes exactly what the file no longer names.
	pruned := edit(t, exportB, func(root declarative.Object) {
		gw := find(t, root, "tenants", "id", "acme", "gateways", "slug", "prod")
		gw["rules"] = drop(t, gw["rules"], "name", "project-names")
		gw["tokens"] = drop(t, gw["tokens"], "name", "ci")
		acme := find(t, root, "tenants", "id", "acme")
		acme["users"] = drop(t, acme["users"], "email", "ops@acme.example")
		acme["gateways"] = drop(t, acme["gateways"], "slug", "staging")
	})
	filePruned := filepath.Join(work, "pruned.yaml")
	if err := os.WriteFile(filePruned, pruned, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := applyFile(t, b.base, filePruned); err != nil || !strings.Contains(out, "No changes") {
		t.Fatalf("apply without --prune deleted or changed something: %v\n%s", err, out)
	}
	out, err = applyFile(t, b.base, filePruned, "--prune")
	if err != nil {
		t.Fatalf("apply --prune: %v\n%s", err, out)
	}
	wantPlan := "delete gateway token acme/prod/ci\ndelete rule acme/prod/project-names\n" +
		"delete user acme/ops@acme.example\ndelete gateway acme/staging\n" +
		"Plan: 0 to create, 0 to update, 0 to replace, 4 to delete.\n"
	if out != wantPlan {
		t.Fatalf("prune plan:\n%s\nwant:\n%s", out, wantPlan)
	}
	if d := cmp.Diff(string(pruned), string(exportFile(t, b.base))); d != "" {
		t.Fatalf("after --prune the export differs from the file (-file +export):\n%s", d)
	}
	for _, log := range []string{a.log, b.log} {
		data, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		mustNotContain(t, "a server's log", data, canaryOpenAIKey, canaryAnthropicKey, canaryAlertSecret, canaryPassword, rotated)
	}
}

// idIn returns the id of the object of a list path whose field is value.
func idIn(t *testing.T, base, path, field, value string) string {
	t.Helper()
	for _, o := range call(t, base, "GET", path, "", 200)["data"].([]any) {
		if o := o.(map[string]any); o[field] == value {
			return o["id"].(string)
		}
	}
	t.Fatalf("no %s %s in %s", field, value, path)
	return ""
}

// edit parses a configuration, changes it and writes it back.
func edit(t *testing.T, data []byte, change func(declarative.Object)) []byte {
	t.Helper()
	root, err := declarative.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	change(root)
	out, err := declarative.Marshal(root)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// find walks lists of objects by field value: find(root, "tenants", "id",
// "acme", "gateways", "slug", "prod").
func find(t *testing.T, o declarative.Object, path ...string) declarative.Object {
	t.Helper()
	for ; len(path) >= 3; path = path[3:] {
		var next declarative.Object
		for _, e := range o[path[0]].([]any) {
			if e := e.(declarative.Object); e[path[1]] == path[2] {
				next = e
			}
		}
		if next == nil {
			t.Fatalf("no %s with %s %s", path[0], path[1], path[2])
		}
		o = next
	}
	return o
}

// drop returns the list less the object whose field is value.
func drop(t *testing.T, list any, field, value string) []any {
	t.Helper()
	var out []any
	for _, e := range list.([]any) {
		if e.(declarative.Object)[field] != value {
			out = append(out, e)
		}
	}
	if len(out) != len(list.([]any))-1 {
		t.Fatalf("no %s %s to drop", field, value)
	}
	return out
}
