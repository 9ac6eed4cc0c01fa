package admin

import (
	"context"
	"fmt"
	"strings"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/secret"
	"github.com/sluicehq/sluice/internal/store"
)

// ResealReport counts what Reseal did; it never holds a secret.
type ResealReport struct {
	// KeyID is the id of the current master key, which every sealed value
	// is under afterwards.
	KeyID string `json:"key_id"`
	// Total is the number of sealed values (provider keys and tenants'
	// alert signing secrets).
	Total int `json:"total"`
	// Resealed were sealed with another (previous) master key and are now
	// sealed with the current one.
	Resealed int `json:"resealed"`
	// Current were sealed with the current master key already.
	Current int `json:"current"`
}

// Reseal seals every sealed value of the store — the provider keys and
// the tenants' alert signing secrets — with
// the current master key (`sluice keys reseal`, the last step of a master
// key rotation, docs/security.md). Values sealed with a previous key are
// opened with the keys the box was given (Config.Box and its previous
// key) and sealed anew; values under the current key are left as they
// are, so running it again changes nothing. It runs in one transaction:
// if any value does not open, nothing is changed and the error names the
// rows (never a value). It bumps the configuration version, so that
// running proxies rebuild their snapshot and pick up keys they could not
// open before. The audit log records the counts under the actor "cli".
func (s *Service) Reseal(ctx context.Context) (*ResealReport, error) {
	box := s.cfg.Box
	rep := &ResealReport{KeyID: box.KeyID()}
	p := &auth.Principal{Email: "cli", Role: auth.Administrator}
	c := &change{Action: "keys.reseal", ResourceType: "provider_key", Config: true}
	err := s.write(ctx, p, c, func(tx bun.Tx) error {
		if err := store.Lock[store.ProviderKey](ctx, tx, store.Ne("id", "")); err != nil {
			return err
		}
		keys, err := store.All[store.ProviderKey](ctx, tx, "id")
		if err != nil {
			return fmt.Errorf("read provider keys: %w", err)
		}
		var broken []string
		for i := range keys {
			k := &keys[i]
			rep.Total++
			if sealedKeyID(k.SealedKey) == box.KeyID() {
				rep.Current++
				continue
			}
			v, err := box.Open(k.SealedKey)
			if err != nil {
				broken = append(broken, k.ID)
				continue
			}
			if k.SealedKey, err = box.Seal(v.Reveal()); err != nil {
				return fmt.Errorf("seal provider key %s: %w", k.ID, err)
			}
			if err := store.Update(ctx, tx, k, "sealed_key"); err != nil {
				return fmt.Errorf("write provider key %s: %w", k.ID, err)
			}
			rep.Resealed++
		}
		brokenTenants, err := resealTenants(ctx, tx, box, rep)
		if err != nil {
			return err
		}
		broken = append(broken, brokenTenants...)
		if len(broken) > 0 {
			return fmt.Errorf("%d sealed values (provider keys, tenant alert secrets) open with neither the current nor the previous master key (%s); nothing was changed",
				len(broken), strings.Join(broken, ", "))
		}
		c.Changes = store.Changes{"key_id": rep.KeyID, "total": rep.Total, "resealed": rep.Resealed, "current": rep.Current}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rep, nil
}

// sealedKeyID returns the key id of a value made by secret.Box.Seal
// ("v1:<key id>:…"), or "" for another format.
func sealedKeyID(sealed string) string {
	parts := strings.SplitN(sealed, ":", 3)
	if len(parts) != 3 || parts[0] != "v1" {
		return ""
	}
	return parts[1]
}

// resealTenants reseals the tenants' alert signing secrets as Reseal does
// provider keys, counting them in rep; it returns the tenants whose secret
// opens with no key the box has ("tenant <id>").
func resealTenants(ctx context.Context, tx bun.Tx, box *secret.Box, rep *ResealReport) ([]string, error) {
	tenants, err := store.All[store.Tenant](ctx, tx, "id", store.Ne("alert_webhook_secret", ""))
	if err != nil {
		return nil, fmt.Errorf("read tenants: %w", err)
	}
	var broken []string
	for i := range tenants {
		t := &tenants[i]
		if t.WebhookSecret == nil {
			continue
		}
		rep.Total++
		if sealedKeyID(*t.WebhookSecret) == box.KeyID() {
			rep.Current++
			continue
		}
		v, err := box.Open(*t.WebhookSecret)
		if err != nil {
			broken = append(broken, "tenant "+t.ID)
			continue
		}
		sealed, err := box.Seal(v.Reveal())
		if err != nil {
			return nil, fmt.Errorf("seal the alert secret of tenant %s: %w", t.ID, err)
		}
		t.WebhookSecret = &sealed
		if err := store.Update(ctx, tx, t, "alert_webhook_secret"); err != nil {
			return nil, fmt.Errorf("write the alert secret of tenant %s: %w", t.ID, err)
		}
		rep.Resealed++
	}
	return broken, nil
}
