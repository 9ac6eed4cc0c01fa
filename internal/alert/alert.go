// Package alert sends budget threshold alerts (CONTRACT §14,
// docs/governance.md "Alerts"): when a budget of a tenant reaches 50, 80
// or 100 % of its amount in a period, the tenant's webhook receives one
// signed POST, once across every replica.
//
// The budget manager calls OnSettle after every settle, on the request's
// goroutine: it compares the spend it is given with the thresholds in
// memory and hands a crossing to a bounded queue, never waiting and never
// touching the database. Run, the one worker, claims each crossing in the
// relational store (the unique alerts row: only the replica whose insert
// added it delivers), and POSTs it with retries.
package alert

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/internal/budget"
	"github.com/sluicehq/sluice/internal/ids"
	"github.com/sluicehq/sluice/internal/money"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/internal/ssrf"
	"github.com/sluicehq/sluice/internal/store"
)

// Thresholds are the per cent of a budget's amount that alert.
var Thresholds = [...]int{50, 80, 100}

// SignatureHeader carries "sha256=" and the hex HMAC-SHA256 of the raw
// body under the tenant's signing secret.
const SignatureHeader = "x-sluice-signature"

// IDHeader carries the alert's id, the same on every retry: receivers
// may drop a delivery they have already seen.
const IDHeader = "x-sluice-alert-id"

// Defaults of Config.
const (
	DefaultQueueSize   = 1024
	DefaultMaxAttempts = 6
	DefaultFirstRetry  = 5 * time.Second
	DefaultTimeout     = 10 * time.Second
	// noURLRecheck is how long a crossing of a tenant without a webhook
	// (or whose claim failed) is not looked at again by this process.
	noURLRecheck = time.Minute
	// seenKeep is how long a crossing of a period stays remembered after
	// the period started: longer than the longest period (a month).
	seenKeep = 32 * 24 * time.Hour
)

// Config configures an Alerter.
type Config struct {
	// DB is the relational store: the claims, the tenants' webhooks.
	DB bun.IDB
	// Box opens the sealed signing secrets.
	Box *secret.Box
	// AllowPrivate lets webhooks live on loopback and private addresses,
	// as provider base URLs may (--allow-private-upstreams); link-local
	// and metadata addresses are always refused, at every connection.
	AllowPrivate bool
	Logger       *slog.Logger
	// QueueSize bounds the crossings waiting for the worker; default 1024.
	QueueSize int
	// MaxAttempts is how many POSTs an alert gets before it is recorded
	// failed; default 6.
	MaxAttempts int
	// FirstRetry is the wait before the first retry, default 5 s; each
	// later retry waits three times the one before (5 s, 15 s, 45 s, …).
	FirstRetry time.Duration
	// Timeout bounds one POST; default 10 s.
	Timeout time.Duration
	// Client sends the POSTs; default a client whose dialer applies the
	// ssrf rule to every address it connects to and that follows no
	// redirect.
	Client *http.Client
	// Now is the clock of the payload's "at"; default time.Now.
	Now func() time.Time
}

// Validate fills the defaults and reports an invalid field.
func (c *Config) Validate() error {
	if c.DB == nil {
		return errors.New("alert: a store is required")
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	for _, v := range []struct {
		name string
		p    *int
		def  int
	}{{"queue size", &c.QueueSize, DefaultQueueSize}, {"max attempts", &c.MaxAttempts, DefaultMaxAttempts}} {
		if *v.p < 0 {
			return fmt.Errorf("alert: %s %d is negative", v.name, *v.p)
		}
		if *v.p == 0 {
			*v.p = v.def
		}
	}
	if c.FirstRetry <= 0 {
		c.FirstRetry = DefaultFirstRetry
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Client == nil {
		c.Client = NewClient(c.AllowPrivate)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}

// Payload is the JSON body of an alert (CONTRACT §14).
type Payload struct {
	Type      string    `json:"type"`
	Tenant    string    `json:"tenant"`
	Scope     string    `json:"scope"`
	ScopeID   string    `json:"scope_id"`
	Period    string    `json:"period"`
	Threshold int       `json:"threshold"`
	SpentUSD  money.USD `json:"spent_usd"`
	AmountUSD money.USD `json:"amount_usd"`
	At        time.Time `json:"at"`
}

// PayloadOf is the body of a.
func PayloadOf(a *store.Alert) Payload {
	return Payload{Type: "budget.threshold", Tenant: a.TenantID, Scope: a.Scope, ScopeID: a.ScopeID, Period: a.Period,
		Threshold: a.Threshold, SpentUSD: a.SpentUSD, AmountUSD: a.AmountUSD, At: a.At.UTC()}
}

// Sign is the x-sluice-signature value of body under key.
func Sign(key, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Alerter detects threshold crossings and delivers their alerts.
type Alerter struct {
	cfg Config
	// queue holds crossings for Run: QueueSize of them. When it is full
	// a crossing is dropped and forgotten (counted in Dropped), so that
	// the next settle of the same budget offers it again.
	queue chan crossing
	// seen holds, per budget and period, which thresholds this process
	// has handed to the queue: budgetKey → *offers.
	seen    sync.Map
	dropped atomic.Int64
}

// budgetKey is one budget in one period.
type budgetKey struct {
	kind, id string
	start    int64 // unix s, 0 for a total budget
}

// offers holds, per threshold, offeredForGood once the crossing went to
// the queue, a unix ms until which it is not offered again (a tenant
// without a webhook, a failed claim), or 0: not offered.
type offers [len(Thresholds)]atomic.Int64

const offeredForGood = -1

type crossing struct {
	key           budgetKey
	threshold     int // index in Thresholds
	period        string
	spent, amount money.USD
	at            time.Time
}

// New validates cfg and returns an Alerter; Run delivers.
func New(cfg Config) (*Alerter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Alerter{cfg: cfg, queue: make(chan crossing, cfg.QueueSize)}, nil
}

// Dropped is how many crossings found the queue full.
func (a *Alerter) Dropped() int64 { return a.dropped.Load() }

// OnSettle is budget.Config.OnSettle: it offers the worker every
// threshold s has reached that this process has not offered yet in s's
// period. It never blocks and makes no I/O.
func (a *Alerter) OnSettle(_ context.Context, s budget.Settlement) {
	if s.Amount <= 0 || int64(s.Spent)*100 < int64(s.Amount)*int64(Thresholds[0]) {
		return
	}
	k := budgetKey{kind: s.Kind, id: s.ID, start: unixOrZero(s.PeriodStart)}
	v, ok := a.seen.Load(k)
	if !ok {
		v, _ = a.seen.LoadOrStore(k, new(offers))
	}
	o := v.(*offers)
	var nowMS int64
	for i, t := range Thresholds {
		if int64(s.Spent)*100 < int64(s.Amount)*int64(t) {
			return
		}
		st := o[i].Load()
		if st == offeredForGood {
			continue
		}
		if st > 0 {
			if nowMS == 0 {
				nowMS = a.cfg.Now().UnixMilli()
			}
			if nowMS < st {
				continue
			}
		}
		if !o[i].CompareAndSwap(st, offeredForGood) {
			continue // another settle offered it just now
		}
		select {
		case a.queue <- crossing{key: k, threshold: i, period: s.Period, spent: s.Spent, amount: s.Amount, at: a.cfg.Now().UTC()}:
		default:
			o[i].Store(0)
			a.dropped.Add(1)
		}
	}
}

// delivery is a claimed alert waiting for its next POST.
type delivery struct {
	alert *store.Alert
	due   time.Time
}

// Run claims and delivers alerts until ctx ends. Alerts waiting for a
// retry when it ends stay "pending" in the store.
func (a *Alerter) Run(ctx context.Context) error {
	var retries []*delivery
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	sweep := time.NewTicker(time.Hour)
	defer sweep.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case c := <-a.queue:
			if al := a.claim(ctx, c); al != nil {
				if d := a.attempt(ctx, al); d != nil {
					retries = append(retries, d)
				}
			}
		case <-timer.C:
			now := time.Now()
			var later []*delivery
			for _, d := range retries {
				if d.due.After(now) {
					later = append(later, d)
				} else if next := a.attempt(ctx, d.alert); next != nil {
					later = append(later, next)
				}
			}
			retries = later
		case <-sweep.C:
			a.forget(time.Now().Add(-seenKeep))
		}
		resetTimer(timer, retries)
	}
}

// resetTimer sets t to the earliest due retry, or an hour away.
func resetTimer(t *time.Timer, retries []*delivery) {
	wait := time.Hour
	for _, d := range retries {
		wait = min(wait, max(time.Until(d.due), 0))
	}
	t.Reset(wait)
}

// forget drops the remembered crossings of periods that started before
// cutoff (not those of total budgets).
func (a *Alerter) forget(cutoff time.Time) {
	a.seen.Range(func(k, _ any) bool {
		if s := k.(budgetKey).start; s != 0 && s < cutoff.Unix() {
			a.seen.Delete(k)
		}
		return true
	})
}

// claim resolves the crossing's tenant and claims its alert. It returns
// the alert when this process owns its delivery; nil when the tenant has
// no webhook, another replica (or an earlier run) claimed it, or the
// store failed (then the crossing is offered again a minute later).
func (a *Alerter) claim(ctx context.Context, c crossing) *store.Alert {
	tenantID, err := a.tenantOf(ctx, c.key.kind, c.key.id)
	if err == nil {
		var t *store.Tenant
		t, err = store.Get[store.Tenant](ctx, a.cfg.DB, store.Eq("id", tenantID))
		if err == nil && (t.Settings.AlertWebhookURL == "" || t.Status != store.TenantActive) {
			a.recheckLater(c)
			return nil
		}
	}
	if err != nil {
		a.cfg.Logger.Warn("budget alert: read the tenant of a budget; tried again later", "scope", c.key.kind, "id", c.key.id, "err", err)
		a.recheckLater(c)
		return nil
	}
	al := &store.Alert{ID: ids.New("alert"), TenantID: tenantID, Scope: c.key.kind, ScopeID: c.key.id, Period: c.period,
		PeriodStart: c.key.start, Threshold: Thresholds[c.threshold], SpentUSD: c.spent, AmountUSD: c.amount, At: c.at,
		Status: store.AlertPending}
	owned, err := store.ClaimAlert(ctx, a.cfg.DB, al)
	if err != nil {
		a.cfg.Logger.Warn("budget alert: claim; tried again later", "tenant", tenantID, "scope", c.key.kind, "id", c.key.id, "err", err)
		a.recheckLater(c)
		return nil
	}
	if !owned {
		return nil
	}
	return al
}

// recheckLater lets the budget's next settle offer c again after
// noURLRecheck.
func (a *Alerter) recheckLater(c crossing) {
	if v, ok := a.seen.Load(c.key); ok {
		v.(*offers)[c.threshold].Store(a.cfg.Now().Add(noURLRecheck).UnixMilli())
	}
}

// tenantOf is the tenant of a budget's object.
func (a *Alerter) tenantOf(ctx context.Context, kind, id string) (string, error) {
	var err error
	switch kind {
	case budget.KindTenant:
		return id, nil
	case budget.KindGateway:
		var g *store.Gateway
		if g, err = store.Get[store.Gateway](ctx, a.cfg.DB, store.Eq("id", id)); err == nil {
			return g.TenantID, nil
		}
	case budget.KindUser:
		var u *store.User
		if u, err = store.Get[store.User](ctx, a.cfg.DB, store.Eq("id", id)); err == nil {
			return u.TenantID, nil
		}
	case budget.KindToken:
		var t *store.Token
		if t, err = store.Get[store.Token](ctx, a.cfg.DB, store.Eq("id", id)); err == nil {
			return t.TenantID, nil
		}
	default:
		err = fmt.Errorf("unknown budget scope %q", kind)
	}
	return "", fmt.Errorf("%s %s: %w", kind, id, err)
}

// attempt POSTs al once and records the outcome. It returns the next
// try's delivery, or nil once al is delivered or failed for good.
func (a *Alerter) attempt(ctx context.Context, al *store.Alert) *delivery {
	err := a.post(ctx, al)
	now := a.cfg.Now().UTC()
	al.Attempts++
	al.LastAttemptAt = &now
	var next *delivery
	switch {
	case err == nil:
		al.Status, al.LastError, al.DeliveredAt = store.AlertDelivered, "", &now
	case al.Attempts >= a.cfg.MaxAttempts:
		al.Status, al.LastError = store.AlertFailed, err.Error()
	default:
		al.LastError = err.Error()
		wait := a.cfg.FirstRetry
		for range al.Attempts - 1 {
			wait *= 3
		}
		next = &delivery{alert: al, due: time.Now().Add(wait)}
	}
	if err != nil {
		a.cfg.Logger.Warn("budget alert: delivery failed", "alert", al.ID, "tenant", al.TenantID, "attempt", al.Attempts,
			"gave_up", next == nil, "err", err)
	}
	if uerr := store.Update(ctx, a.cfg.DB, al, "status", "attempts", "last_error", "last_attempt_at", "delivered_at"); uerr != nil {
		a.cfg.Logger.Warn("budget alert: record delivery", "alert", al.ID, "err", uerr)
	}
	return next
}

// post sends al to its tenant's webhook, read anew at every try.
func (a *Alerter) post(ctx context.Context, al *store.Alert) error {
	t, err := store.Get[store.Tenant](ctx, a.cfg.DB, store.Eq("id", al.TenantID))
	if err != nil {
		return fmt.Errorf("read tenant: %w", err)
	}
	url := t.Settings.AlertWebhookURL
	if url == "" {
		return errors.New("the tenant has no alert_webhook_url")
	}
	if t.WebhookSecret == nil || *t.WebhookSecret == "" || a.cfg.Box == nil {
		return errors.New("the tenant has no alert_webhook_secret")
	}
	key, err := a.cfg.Box.Open(*t.WebhookSecret)
	if err != nil {
		return fmt.Errorf("open the signing secret: %w", err)
	}
	body, err := json.Marshal(PayloadOf(al))
	if err != nil {
		return fmt.Errorf("encode payload: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, a.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "sluice-alerts")
	req.Header.Set(SignatureHeader, Sign([]byte(key.Reveal()), body))
	req.Header.Set(IDHeader, al.ID)
	resp, err := a.cfg.Client.Do(req)
	if err != nil {
		return fmt.Errorf("post: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("the receiver answered %d", resp.StatusCode)
	}
	return nil
}

// NewClient returns the webhook client: no proxy, no redirects, and a
// dialer that refuses every address package ssrf refuses (loopback and
// private ones too unless allowPrivate), judged at connect time against
// DNS rebinding.
func NewClient(allowPrivate bool) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second, Control: func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("dial %s %s: not an IP address and port", network, address)
		}
		if why := ssrf.Reason(ap.Addr(), allowPrivate); why != "" {
			return fmt.Errorf("dial %s: a %s address is not allowed", ap.Addr(), why)
		}
		return nil
	}}
	tr := &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 2, IdleConnTimeout: time.Minute,
		TLSHandshakeTimeout: 5 * time.Second, ResponseHeaderTimeout: DefaultTimeout}
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func unixOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}
