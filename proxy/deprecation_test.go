package proxy

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/money"
)

// Deprecations (CONTRACT §7): a model past deprecated_at answers with a
// Deprecation header (and Sunset when a sunset date is set); past
// sunset_at it answers 410 model_sunset without calling the provider.
func TestDeprecatedAndSunsetModels(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessConfig{gateway: cacheOn(300)})
	now := time.Now().UTC().Truncate(time.Second)
	deprecated, sunset := now.Add(-24*time.Hour), now.Add(30*24*time.Hour)
	past, gone := now.Add(-60*24*time.Hour), now.Add(-time.Hour)
	later := now.Add(24 * time.Hour)
	price := func(model string, dep, sun *time.Time) admin.PriceInput {
		return admin.PriceInput{Provider: "openai", Model: model, InputPerMTok: money.FromFloat(1), OutputPerMTok: money.FromFloat(2),
			DeprecatedAt: dep, SunsetAt: sun}
	}
	_, err := h.svc.PutModelPrices(h.ctx, h.root, []admin.PriceInput{
		price("old-model", &deprecated, &sunset),
		price("old-no-sunset", &deprecated, nil),
		price("gone-model", &past, &gone),
		price("soon-model", &later, nil),
	})
	must(t, err)
	h.rebuild()

	wantDeprecation := func(resp *http.Response, dep time.Time, sun *time.Time) {
		t.Helper()
		if got, want := resp.Header.Get("Deprecation"), "@"+strconv.FormatInt(dep.Unix(), 10); got != want {
			t.Errorf("Deprecation %q, want %q", got, want)
		}
		want := ""
		if sun != nil {
			want = sun.Format(time.RFC1123)
		}
		if got := resp.Header.Get("Sunset"); got != want {
			t.Errorf("Sunset %q, want %q", got, want)
		}
	}

	resp, b := h.chat(chatBody("openai/old-model", ""))
	wantStatus(t, resp, b, 200)
	wantDeprecation(resp, deprecated, &sunset)
	// A cache hit and a stream carry it too.
	resp, b = h.chat(chatBody("openai/old-model", ""))
	wantCache(t, resp, "HIT")
	wantDeprecation(resp, deprecated, &sunset)
	resp, sr := h.openStream(t, chatBody("openai/old-no-sunset", `,"stream":true`))
	sr.all(t)
	resp.Body.Close()
	wantDeprecation(resp, deprecated, nil)

	resp, b = h.chat(chatBody("openai/soon-model", ""))
	wantStatus(t, resp, b, 200)
	if resp.Header.Get("Deprecation") != "" || resp.Header.Get("Sunset") != "" {
		t.Errorf("a model deprecated tomorrow answered Deprecation %q Sunset %q", resp.Header.Get("Deprecation"), resp.Header.Get("Sunset"))
	}

	calls := h.mock.Count()
	resp, b = h.chat(chatBody("openai/gone-model", ""))
	wantAPIError(t, resp, b, 410, "not_found_error", "model_sunset", "")
	if h.mock.Count() != calls {
		t.Errorf("the provider was called for a sunset model")
	}
	if rec := h.record(resp.Header.Get(RequestIDHeader)); rec.Status != 410 || rec.ErrorCode != "model_sunset" {
		t.Errorf("record status %d code %q", rec.Status, rec.ErrorCode)
	}
}
