package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// scrapeNames GETs /metrics and returns the sample names it holds and the
// sum of the samples of sum.
func scrapeNames(t *testing.T, base, sum string) (map[string]bool, float64) {
	t.Helper()
	res, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("/metrics: %d %v", res.StatusCode, err)
	}
	names := map[string]bool{}
	var total float64
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		name := line[:strings.IndexAny(line, "{ ")]
		names[name] = true
		if name == sum {
			v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err != nil {
				t.Fatalf("/metrics line %q: %v", line, err)
			}
			total += v
		}
	}
	return names, total
}

// TestServeMetricsAndDashboard (issue 15): through `sluice serve`, the
// requests counted at /metrics are the request logs the admin API reads
// once the pipeline flushed them, and every series the Grafana dashboard
// (deploy/grafana/sluice-dashboard.json) queries is in the scrape.
func TestServeMetricsAndDashboard(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, url, token, _ := serveWithGateway(t, ctx)
	gws := call(t, base, "GET", "/admin/v1/tenants/acme/gateways", "", 200)
	gwID := gws["data"].([]any)[0].(map[string]any)["id"].(string)
	call(t, base, "POST", "/admin/v1/gateways/"+gwID+"/rules",
		`{"name":"codename","direction":"request","kind":"keyword","patterns":["bluebird"],"action":"block"}`, 201)
	for body, want := range map[string]int{
		`{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`:                   200,
		`{"model":"openai/gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}]}`:     200,
		`{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"about bluebird"}]}`:       400,
		`{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"temperature":"x"}`: 400,
	} {
		if s := postJSON(t, url, token, body); s != want {
			t.Fatalf("status %d, want %d for %s", s, want, body)
		}
	}

	var names map[string]bool
	var counted float64
	logged := 0
	for deadline := time.Now().Add(10 * time.Second); ; {
		logs := call(t, base, "GET", "/admin/v1/logs?tenant=acme&limit=1000", "", 200)
		logged = len(logs["data"].([]any))
		names, counted = scrapeNames(t, base, "sluice_requests_total")
		if counted == float64(logged) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if counted != float64(logged) || logged < 4 {
		t.Errorf("sluice_requests_total sums to %v, the admin API has %d logs (want equal, at least 4)", counted, logged)
	}

	raw, err := os.ReadFile("../../deploy/grafana/sluice-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	metric := regexp.MustCompile(`\bsluice_[a-z_]+\b`)
	queried := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			for _, name := range metric.FindAllString(tg.Expr, -1) {
				queried++
				if !names[name] {
					t.Errorf("panel %q queries %s, which /metrics does not serve", p.Title, name)
				}
			}
		}
	}
	if queried < 10 {
		t.Errorf("the dashboard queries %d series, want the traffic, latency, token, cost, breaker and pipeline series", queried)
	}
}
