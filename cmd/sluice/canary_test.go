package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"

	"github.com/sluicehq/sluice/internal/canary"
	"github.com/sluicehq/sluice/internal/testenv"
	"github.com/sluicehq/sluice/proxy/providers/providertest"
)

// TestCanaryServeProcess is the process-level canary check of checklist
// item 33 (and §1.6): it runs the real binary, `sluice serve` logging at
// debug level into ClickHouse, plants canary secrets (a provider key, a
// user's password, API and session tokens), drives the traffic most
// likely to echo them — control characters in credential headers, a token
// on the query string, an upstream that quotes the key in its errors, a
// refused key, a broken stream, wrong sign-ins — and then greps every line
// the process wrote, every ClickHouse row (request logs and spans) and the
// admin API's logs and traces for the canaries.
func TestCanaryServeProcess(t *testing.T) {
	chURL := testenv.ClickHouseDatabase(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mock, mockURL, err := providertest.Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer mock.Close()

	dir := t.TempDir()
	logPath := filepath.Join(dir, "sluice.log")
	sl := startSluice(t, filepath.Join(dir, "data"), freePort(t), chURL, logPath, "--log-level", "debug", "--log-format", "json")
	base := sl.base

	key := canary.New("sk-proj-")
	key2 := canary.New("sk-proj-")
	password := canary.New("pw-")
	admin := func(method, path, body string, want int) map[string]any {
		t.Helper()
		return call(t, base, method, path, body, want)
	}
	admin("POST", "/admin/v1/tenants", `{"id":"acme","name":"Acme"}`, 201)
	gw := admin("POST", "/admin/v1/tenants/acme/gateways", `{"slug":"prod","log_bodies":true,"retry":{"max_attempts":2,"backoff_ms":1},
		"budget":{"amount_usd":0.0000001,"period":"daily","hard":false}}`, 201)
	gwID := gw["id"].(string)
	admin("POST", "/admin/v1/gateways/"+gwID+"/keys",
		fmt.Sprintf(`{"provider":"openai","alias":"main","key":%q,"base_url":%q}`, key, mockURL+"/v1"), 201)
	admin("POST", "/admin/v1/gateways/"+gwID+"/keys",
		fmt.Sprintf(`{"provider":"openai-compatible","alias":"meta","key":%q,"base_url":"http://[64:ff9b::a9fe:a9fe]/"}`, key2), 400)
	// The alerts' signing secret: refused with a metadata webhook, then
	// stored with one whose deliveries fail (nothing listens on port 9):
	// the tiny soft budget above makes the traffic below cross every
	// threshold, and each failed POST is logged.
	hookSecret := canary.New("whsec-")
	hook := `{"settings":{"log_retention_days":30,"log_bodies_default":true,"allowed_providers":[],"alert_webhook_url":%q,"alert_webhook_secret":%q}}`
	admin("PATCH", "/admin/v1/tenants/acme", fmt.Sprintf(hook, "http://169.254.169.254/hook", hookSecret), 400)
	admin("PATCH", "/admin/v1/tenants/acme", fmt.Sprintf(hook, "http://127.0.0.1:9/hook", hookSecret), 200)
	u := admin("POST", "/admin/v1/tenants/acme/users",
		fmt.Sprintf(`{"email":"dev@acme.test","name":"Dev","role":"member","password":%q}`, password), 201)
	if st := postJSON(t, base+"/admin/v1/users/"+u["id"].(string)+"/gateways/"+gwID, testAdminToken, ""); st != 204 {
		t.Fatalf("assign the gateway: status %d", st)
	}
	tok := admin("POST", "/admin/v1/gateways/"+gwID+"/tokens", `{"name":"canary"}`, 201)["secret"].(string)
	canary.Register(tok)
	chatURL := base + "/v1/acme/prod/compat/chat/completions"
	waitServing(t, chatURL, tok)

	// Sign-ins: wrong, the password typed as the email, right.
	for _, b := range []string{
		fmt.Sprintf(`{"email":"dev@acme.test","password":%q}`, password+"x"),
		fmt.Sprintf(`{"email":%q,"password":%q}`, password, password),
	} {
		res, err := http.Post(base+"/admin/v1/session", "application/json", strings.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	res, err := http.Post(base+"/admin/v1/session", "application/json",
		strings.NewReader(fmt.Sprintf(`{"email":"dev@acme.test","password":%q}`, password)))
	if err != nil {
		t.Fatal(err)
	}
	var sess struct{ Token string }
	_ = json.NewDecoder(res.Body).Decode(&sess)
	res.Body.Close()
	if sess.Token == "" {
		t.Fatalf("sign-in: status %d", res.StatusCode)
	}
	canary.Register(sess.Token)

	// Upstream errors that quote the key, a refused key, a broken stream.
	echo := func(s string) string {
		return `{"error":{"message":"Incorrect API key provided: ` + s + `","type":"invalid_request_error"}}`
	}
	body := `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"hello"}]}`
	stream := `{"model":"openai/gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hello"}]}`
	for _, step := range []struct {
		s    providertest.Step
		body string
	}{
		{providertest.Step{Status: 401, Body: echo(key)}, body},
		{providertest.Step{Status: 500, Body: echo("Bearer " + key), Times: 2}, body},
		{providertest.Step{Status: 503, Body: echo(key[len(key)-12:])}, stream},
		{providertest.Step{ResetAfter: 1}, stream},
		{providertest.Step{}, body},
	} {
		mock.Script(step.s)
		postJSON(t, chatURL, tok, step.body)
	}
	postJSON(t, chatURL+"?api_key="+tok, tok, body)
	postJSON(t, chatURL, sess.Token, body) // a session token is no inference credential
	postJSON(t, chatURL, canary.New("sk-sl-"), body)

	// Credentials with control characters, which fasthttp refuses (and
	// used to log verbatim).
	host := strings.TrimPrefix(base, "http://")
	for _, hdr := range []string{
		"Authorization: Bearer " + tok + "\x00",
		"Authorization: Bearer " + tok + "\rX-Evil: 1",
		"x-api-key: " + tok + "\x01",
		"Cookie: sluice_session=" + sess.Token + "\x7f",
	} {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = fmt.Fprintf(c, "POST /v1/acme/prod/compat/chat/completions HTTP/1.1\r\nHost: x\r\n%s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", hdr, len(body), body)
		_, _ = io.Copy(io.Discard, bufio.NewReader(c))
		c.Close()
	}

	// The stored rows, through the admin API and in ClickHouse, once the
	// pipeline has written them.
	var logs []byte
	deadline := time.Now().Add(20 * time.Second)
	for {
		logs = get(t, base+"/admin/v1/logs?limit=1000")
		var page struct{ Data []map[string]any }
		if err := json.Unmarshal(logs, &page); err != nil {
			t.Fatalf("logs: %v: %s", err, logs)
		}
		if len(page.Data) >= 6 {
			for _, r := range page.Data {
				if id, _ := r["id"].(string); id != "" {
					canary.Check(t, "GET /admin/v1/logs/"+id, string(get(t, base+"/admin/v1/logs/"+id)))
				}
				if tr, _ := r["trace_id"].(string); tr != "" {
					canary.Check(t, "GET /admin/v1/traces/"+tr, string(get(t, base+"/admin/v1/traces/"+tr)))
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d request logs after 20 s, want at least 6", len(page.Data))
		}
		time.Sleep(200 * time.Millisecond)
	}
	canary.Check(t, "GET /admin/v1/logs", string(logs))
	canary.Check(t, "GET /admin/v1/audit-log", string(get(t, base+"/admin/v1/audit-log?limit=1000")))
	rows := clickhouseRows(t, chURL)
	if len(rows) < 6 {
		t.Errorf("%d ClickHouse rows, want at least 6", len(rows))
	}
	for i, r := range rows {
		canary.Check(t, fmt.Sprintf("ClickHouse row %d", i), r)
	}

	sl.signal(syscall.SIGTERM)
	out, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(out, []byte("\n")); n < 5 {
		t.Fatalf("the process wrote %d log lines, want its debug log", n)
	}
	if !bytes.Contains(out, []byte("budget alert: delivery failed")) {
		t.Error("no failed alert delivery was logged: the alert secret's path was not exercised")
	}
	canary.Check(t, "the process's output", string(out))
}

// get reads url with the admin token.
func get(t *testing.T, url string) []byte {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// clickhouseRows returns every row of every table of the database in url
// as text.
func clickhouseRows(t *testing.T, url string) []string {
	t.Helper()
	opts, err := ch.ParseDSN(url)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := ch.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tables, err := conn.Query(ctx, "SELECT name FROM system.tables WHERE database = currentDatabase() AND engine NOT LIKE '%View%'")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for tables.Next() {
		var n string
		if err := tables.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	tables.Close()
	var out []string
	for _, n := range names {
		rows, err := conn.Query(ctx, "SELECT toString(tuple(*)) FROM "+n)
		if err != nil {
			t.Fatalf("read %s: %v", n, err)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out = append(out, n+": "+s)
		}
		rows.Close()
	}
	return out
}
