package admin

import (
	"context"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/store"
)

// Budget alerts (CONTRACT §14, docs/governance.md "Alerts"): a tenant's
// webhook URL lives in its settings; its signing secret is write-only,
// sealed with the master key like provider keys, and reads say only
// whether one is set (settings.alert_webhook_secret_set).

// Bounds of a signing secret, in bytes.
const (
	minAlertSecret = 16
	maxAlertSecret = 512
)

// alertWebhook checks the alert settings of ts and seals a new signing
// secret. cur is the tenant's sealed secret now (nil for none). It
// returns the sealed secret the tenant keeps — the new one, nil when
// ts.AlertWebhookSecret is "", cur when it is absent — clears the
// write-only field of ts and fills ts.AlertWebhookSecretSet. A webhook
// URL needs a secret: every alert is signed.
func (s *Service) alertWebhook(ctx context.Context, ts *store.TenantSettings, cur *string) (*string, error) {
	const urlParam, secretParam = "settings.alert_webhook_url", "settings.alert_webhook_secret"
	if err := checkOutboundURL(ctx, nil, urlParam, ts.AlertWebhookURL, s.cfg.AllowPrivateBaseURLs); err != nil {
		return nil, err
	}
	sealed := cur
	if sec := ts.AlertWebhookSecret; sec != nil {
		ts.AlertWebhookSecret = nil
		switch {
		case *sec == "":
			sealed = nil
		case len(*sec) < minAlertSecret || len(*sec) > maxAlertSecret:
			return nil, apierr.Invalid(secretParam, "alert_webhook_secret must be %d to %d bytes long", minAlertSecret, maxAlertSecret)
		default:
			v, err := s.cfg.Box.Seal(*sec)
			if err != nil {
				return nil, err
			}
			sealed = &v
		}
	}
	if ts.AlertWebhookURL != "" && sealed == nil {
		return nil, apierr.Invalid(secretParam, "an alert_webhook_url needs an alert_webhook_secret to sign the alerts with")
	}
	ts.AlertWebhookSecretSet = sealed != nil
	return sealed, nil
}

// secretChange is what the audit log says of a signing secret that
// changed: "set" or "removed", never the secret.
func secretChange(sealed *string) string {
	if sealed == nil {
		return "removed"
	}
	return "set"
}

// ListAlerts lists the budget alerts of a tenant, newest first: every
// alert claimed, with its delivery status.
func (s *Service) ListAlerts(ctx context.Context, p *auth.Principal, tenantID string, pg Page) (*List[store.Alert], error) {
	if err := s.can(ctx, p, auth.OpTenantAlerts); err != nil {
		return nil, err
	}
	pg, err := checkPage(pg)
	if err != nil {
		return nil, err
	}
	t, err := s.tenant(ctx, s.db, p, tenantID)
	if err != nil {
		return nil, err
	}
	rows, next, err := store.ListAlerts(ctx, s.db, t.ID, pg)
	if err != nil {
		return nil, err
	}
	return &List[store.Alert]{Data: rows, NextCursor: next}, nil
}
