package graph

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/analytics/embedded"
	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/auth"
)

// nameReads counts the SELECTs of each table that names are read from.
type nameReads struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *nameReads) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (c *nameReads) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	if !strings.HasPrefix(e.Query, "SELECT") {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, table := range []string{"gateways", "users", "tokens"} {
		if strings.Contains(e.Query, `FROM "`+table+`"`) {
			c.n[table]++
		}
	}
}

// reads returns the counts since the last call and starts again.
func (c *nameReads) reads() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	got := c.n
	c.n = map[string]int{}
	return got
}

// namesWorld is tenant acme with gateways prod ("Production") and a
// deleted one, a gateway token, a Tenant Administrator, an AI Manager and a
// Member, and tenant other with a user; 24 request logs of acme name them.
type namesWorld struct {
	e                         *env
	prod, gone, tok           string
	member, outsider, goneUsr string
	ta, aim                   *auth.Principal
	reads                     *nameReads
}

func newNamesWorld(t *testing.T) *namesWorld {
	t.Helper()
	ctx := context.Background()
	an, err := embedded.Open(ctx, filepath.Join(t.TempDir(), "analytics.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { an.Close() })
	e := newEnvWith(t, func(c *admin.Config) { c.Analytics = an })
	w := &namesWorld{e: e}
	w.prod = e.setupTenant("acme")
	e.mustDo(e.admin, `mutation($id: ID!) { updateGateway(id: $id, input: {name: "Production"}) { id } }`, map[string]any{"id": w.prod})
	w.gone = str(e.mustDo(e.admin, `mutation { createGateway(tenantId: "acme", input: {slug: "old"}) { id } }`, nil), "createGateway", "id")
	w.tok = str(e.mustDo(e.admin, `mutation($g: ID!) { createGatewayToken(gatewayId: $g, input: {name: "ci"}) { id } }`,
		map[string]any{"g": w.prod}), "createGatewayToken", "id")
	user := func(tenant, email, role string) string {
		return str(e.mustDo(e.admin, `mutation($t: ID!, $e: String!, $r: String!) { createUser(tenantId: $t, input: {email: $e, name: "N", role: $r}) { id } }`,
			map[string]any{"t": tenant, "e": email, "r": role}), "createUser", "id")
	}
	w.member = user("acme", "mia@acme.test", "member")
	w.goneUsr = user("acme", "gone@acme.test", "member")
	w.ta = &auth.Principal{UserID: user("acme", "ta@acme.test", "tenant_administrator"), Role: auth.TenantAdministrator, TenantID: "acme"}
	w.aim = &auth.Principal{UserID: user("acme", "aim@acme.test", "ai_manager"), Role: auth.AIManager, TenantID: "acme"}
	e.mustDo(e.admin, `mutation { createTenant(input: {id: "other", name: "Other"}) { id } }`, nil)
	w.outsider = user("other", "x@other.test", "tenant_administrator")
	e.mustDo(e.admin, `mutation($id: ID!) { deleteGateway(id: $id) }`, map[string]any{"id": w.gone})
	e.mustDo(e.admin, `mutation($id: ID!) { deleteUser(id: $id) }`, map[string]any{"id": w.goneUsr})

	now := time.Now().UTC()
	var recs []*analytics.Record
	add := func(gw, token, user string) {
		recs = append(recs, &analytics.Record{ID: fmt.Sprintf("r%02d", len(recs)), TS: now.Add(-time.Duration(len(recs)+1) * time.Minute),
			TenantID: "acme", GatewayID: gw, TokenID: token, UserID: user, Provider: "openai", Model: "gpt-4o", Status: 200})
	}
	for range 20 {
		add(w.prod, w.tok, "")
	}
	add(w.prod, "tok_playground_gone", w.member)
	add(w.gone, "tok_gone", w.goneUsr)
	add(w.prod, "tok_x", w.outsider) // a user of another tenant (a platform Administrator would be one)
	add(w.prod, "tok_y", w.member)
	if err := an.Write(ctx, &analytics.Batch{ID: "b1", Records: recs}); err != nil {
		t.Fatal(err)
	}
	w.reads = &nameReads{n: map[string]int{}}
	e.st.DB.AddQueryHook(w.reads)
	return w
}

// ref is an ObjectRef as the test reads it, "" for null.
func ref(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprintf("%s %s %q %s", str(v, "kind"), str(v, "id"), str(v, "name"), str(v, "state"))
}

const refFields = `{ kind id name state }`

// TestLogNames: the request logs name their gateway, user and token for
// the caller — a deleted object is said deleted, another tenant's user is
// hidden from the Tenant Administrator (named for the Administrator) — and
// every name of a page is read in one query per kind.
func TestLogNames(t *testing.T) {
	w := newNamesWorld(t)
	e := w.e
	q := `{ logs(filter: {tenantId: "acme"}, limit: 50) { data { id gateway ` + refFields + ` user ` + refFields + ` token ` + refFields + ` } } }`
	rows := func(p *auth.Principal) map[string][3]string {
		d := e.mustDo(p, q, nil)
		out := map[string][3]string{}
		for _, r := range get(d, "logs", "data").([]any) {
			out[str(r, "id")] = [3]string{ref(get(r, "gateway")), ref(get(r, "user")), ref(get(r, "token"))}
		}
		return out
	}
	prod := fmt.Sprintf("gateway %s %q named", w.prod, "Production")
	want := map[string][3]string{
		"r00": {prod, "", fmt.Sprintf("token %s %q named", w.tok, "ci")},
		"r20": {prod, fmt.Sprintf("user %s %q named", w.member, "mia@acme.test"), `token tok_playground_gone "" deleted`},
		"r21": {fmt.Sprintf("gateway %s \"\" deleted", w.gone), fmt.Sprintf("user %s \"\" deleted", w.goneUsr), `token tok_gone "" deleted`},
		"r22": {prod, fmt.Sprintf("user %s \"\" hidden", w.outsider), `token tok_x "" deleted`},
	}
	w.reads.reads()
	got := rows(w.ta)
	if len(got) != 24 {
		t.Fatalf("the Tenant Administrator read %d logs, want 24", len(got))
	}
	for id, wr := range want {
		if d := cmp.Diff(wr, got[id]); d != "" {
			t.Errorf("log %s for the Tenant Administrator (-want +got):\n%s", id, d)
		}
	}
	if d := cmp.Diff(map[string]int{"gateways": 1, "users": 1, "tokens": 1}, w.reads.reads()); d != "" {
		t.Errorf("reads of a page of 24 logs, by table (-want +got):\n%s", d)
	}

	// The Administrator sees every tenant: the outsider is named.
	if got := rows(e.admin)["r22"][1]; got != fmt.Sprintf("user %s %q named", w.outsider, "x@other.test") {
		t.Errorf("the outsider for the Administrator: %s, want named", got)
	}

	// Names not asked for are not read.
	w.reads.reads()
	e.mustDo(w.ta, `{ logs(filter: {tenantId: "acme"}, limit: 50) { data { id gatewayId } } }`, nil)
	if got := w.reads.reads(); got["gateways"]+got["users"]+got["tokens"] != 0 {
		t.Errorf("a listing without names read %v", got)
	}

	// One log reads its names too.
	d := e.mustDo(w.ta, `{ log(id: "r20") { gateway `+refFields+` user `+refFields+` } }`, nil)
	if got := ref(get(d, "log", "user")); got != fmt.Sprintf("user %s %q named", w.member, "mia@acme.test") {
		t.Errorf("log r20's user: %s", got)
	}
}

// TestAnalyticsGroupNames: groups by gateway and user name their key; the
// AI Manager, who may not read users, gets them hidden without any read of
// the users; groups by model have no ref; the tenant's top lists are named.
func TestAnalyticsGroupNames(t *testing.T) {
	w := newNamesWorld(t)
	e := w.e
	groups := func(p *auth.Principal, by string) map[string]string {
		d := e.mustDo(p, `query($by: String) { analytics(groupBy: $by) { groups { key ref `+refFields+` } } }`, map[string]any{"by": by})
		out := map[string]string{}
		for _, g := range get(d, "analytics", "groups").([]any) {
			out[str(g, "key")] = ref(get(g, "ref"))
		}
		return out
	}
	w.reads.reads()
	want := map[string]string{
		w.prod: fmt.Sprintf("gateway %s %q named", w.prod, "Production"),
		w.gone: fmt.Sprintf("gateway %s \"\" deleted", w.gone),
	}
	if d := cmp.Diff(want, groups(w.aim, "gateway")); d != "" {
		t.Errorf("groups by gateway for the AI Manager (-want +got):\n%s", d)
	}
	if got := w.reads.reads()["gateways"]; got != 1 {
		t.Errorf("read the gateways %d times, want 1", got)
	}
	want = map[string]string{
		"":         "",
		w.member:   fmt.Sprintf("user %s \"\" hidden", w.member),
		w.goneUsr:  fmt.Sprintf("user %s \"\" hidden", w.goneUsr),
		w.outsider: fmt.Sprintf("user %s \"\" hidden", w.outsider),
	}
	if d := cmp.Diff(want, groups(w.aim, "user")); d != "" {
		t.Errorf("groups by user for the AI Manager (-want +got):\n%s", d)
	}
	if got := w.reads.reads()["users"]; got != 0 {
		t.Errorf("read the users %d times for a role that may not read them", got)
	}
	want[w.member] = fmt.Sprintf("user %s %q named", w.member, "mia@acme.test")
	want[w.goneUsr] = fmt.Sprintf("user %s \"\" deleted", w.goneUsr)
	want[w.outsider] = fmt.Sprintf("user %s \"\" hidden", w.outsider)
	if d := cmp.Diff(want, groups(w.ta, "user")); d != "" {
		t.Errorf("groups by user for the Tenant Administrator (-want +got):\n%s", d)
	}
	if got := groups(w.ta, "model"); got["gpt-4o"] != "" {
		t.Errorf("a group by model has a ref: %s", got["gpt-4o"])
	}

	// Series over time are named as groups are; "other" is no one object.
	w.reads.reads()
	d := e.mustDo(w.aim, `{ seriesByGroup(groupBy: "gateway", limit: 1) { series { key ref `+refFields+` } other { key ref `+refFields+` } } }`, nil)
	if got := ref(get(d, "seriesByGroup", "series", 0, "ref")); got != fmt.Sprintf("gateway %s %q named", w.prod, "Production") {
		t.Errorf("the top series' ref: %s", got)
	}
	if got := get(d, "seriesByGroup", "other", "ref"); got != nil {
		t.Errorf("other's ref = %v, want null", got)
	}
	if got := w.reads.reads()["gateways"]; got != 1 {
		t.Errorf("read the gateways %d times, want 1", got)
	}

	d = e.mustDo(w.ta, `{ tenantAnalytics(tenantId: "acme") { topGateways { key ref `+refFields+` } topModels { key ref `+refFields+` } } }`, nil)
	if got := ref(get(d, "tenantAnalytics", "topGateways", 0, "ref")); got != fmt.Sprintf("gateway %s %q named", w.prod, "Production") {
		t.Errorf("top gateway: %s", got)
	}
	if got := get(d, "tenantAnalytics", "topModels", 0, "ref"); got != nil {
		t.Errorf("top model's ref = %v, want null", got)
	}
}

// TestAuditNames: an audit entry names the resource it concerns and its
// actor as they are now; a deleted resource is said deleted.
func TestAuditNames(t *testing.T) {
	w := newNamesWorld(t)
	e := w.e
	e.mustDo(w.ta, `mutation { createGateway(tenantId: "acme", input: {slug: "new", name: "Newer"}) { id } }`, nil)
	d := e.mustDo(e.admin, `{ auditLog(limit: 100) { data { action resourceId resource `+refFields+` actor `+refFields+` } } }`, nil)
	got := map[string]string{}
	for _, a := range get(d, "auditLog", "data").([]any) {
		k := str(a, "action") + " " + str(a, "resourceId")
		got[k] = ref(get(a, "resource")) + " by " + ref(get(a, "actor"))
	}
	root := `user usr_root "" deleted` // the test's Administrator has no user row
	for k, want := range map[string]string{
		"gateway.update " + w.prod:      fmt.Sprintf("gateway %s %q named by %s", w.prod, "Production", root),
		"gateway.delete " + w.gone:      fmt.Sprintf("gateway %s \"\" deleted by %s", w.gone, root),
		"user.create " + w.member:       fmt.Sprintf("user %s %q named by %s", w.member, "mia@acme.test", root),
		"tenant.create other":           `tenant other "Other" named by ` + root,
		"gateway_token.create " + w.tok: fmt.Sprintf("token %s %q named by %s", w.tok, "ci", root),
	} {
		if got[k] != want {
			t.Errorf("%s: %s, want %s", k, got[k], want)
		}
	}
	var byTA string
	for k, v := range got {
		if strings.HasPrefix(k, "gateway.create ") && strings.Contains(v, "Newer") {
			byTA = v
		}
	}
	if !strings.HasSuffix(byTA, fmt.Sprintf("by user %s %q named", w.ta.UserID, "ta@acme.test")) {
		t.Errorf("the gateway the Tenant Administrator created: %q, want its actor named", byTA)
	}
}

// TestNamesReadFailureOnce: when the read of a kind's names fails, every
// field of that kind answers the error and the store is not asked again.
func TestNamesReadFailureOnce(t *testing.T) {
	e := newEnv(t)
	reads := &nameReads{n: map[string]int{}}
	e.st.DB.AddQueryHook(reads)
	ctx := auth.With(context.Background(), e.admin)
	n := &names{svc: e.svc}
	n.expect(admin.RefGateway, "gw_a", "gw_b", "gw_c")
	if err := e.st.DB.Close(); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"gw_a", "gw_b", "gw_c"} {
		if r, err := n.ref(ctx, admin.RefGateway, id); err == nil {
			t.Errorf("%s: %+v, want the read's error", id, r)
		}
	}
	if got := reads.reads()["gateways"]; got != 1 {
		t.Errorf("read the gateways %d times, want 1", got)
	}
}
