package admin

import (
	"context"
	"errors"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/ids"
	"github.com/sluicehq/sluice/internal/store"
)

// The bootstrap tenant and user (CONTRACT §1).
const (
	bootstrapTenant = "platform"
	bootstrapEmail  = "admin@localhost"
	minAdminToken   = 16
)

// errHasUsers stops the bootstrap transaction when the store already has a user.
var errHasUsers = errors.New("store has users")

// Bootstrap prepares an empty store: when there is no user, it creates the
// tenant "platform" (if missing), the Administrator admin@localhost (with
// no password) and a user token named "bootstrap" for it, whose secret is
// adminToken (SLUICE_ADMIN_TOKEN) when given, else a new one. It returns
// that secret and created true; with users present it does nothing and
// returns ("", false, nil). Everything, audit row included, is one
// transaction, so that two processes starting at once create one admin. A
// malformed adminToken is an error even when there is nothing to do, so
// that the misconfiguration shows at start-up.
func (s *Service) Bootstrap(ctx context.Context, adminToken string) (secret string, created bool, err error) {
	if adminToken != "" && (len(adminToken) < minAdminToken || !printableSecret(adminToken)) {
		return "", false, fmt.Errorf("SLUICE_ADMIN_TOKEN must be %d to %d printable characters without spaces", minAdminToken, maxSecretLen)
	}
	secret = adminToken
	if secret == "" {
		secret = ids.NewSecret()
	}
	now := s.now()
	u := &store.User{ID: ids.New("usr"), TenantID: bootstrapTenant, Email: bootstrapEmail, Name: "Administrator",
		Role: auth.Administrator, Status: store.UserActive, CreatedAt: now, UpdatedAt: now}
	t := tokenFor(secret, store.TokenUser, bootstrapTenant, nil, &u.ID, "bootstrap", now)
	p := &auth.Principal{Email: "bootstrap", Role: auth.Administrator}
	c := &change{Action: "bootstrap", ResourceType: "user", ResourceID: u.ID, TenantID: bootstrapTenant, Config: true,
		Changes: store.Changes{"email": u.Email, "role": u.Role, "token": t.ID}}
	err = s.write(ctx, p, c, func(tx bun.Tx) error {
		if n, err := store.Count[store.User](ctx, tx); err != nil {
			return fmt.Errorf("count users: %w", err)
		} else if n > 0 {
			return errHasUsers
		}
		ok, err := store.Exists[store.Tenant](ctx, tx, store.Eq("id", bootstrapTenant))
		if err != nil {
			return fmt.Errorf("read tenant %s: %w", bootstrapTenant, err)
		}
		if !ok {
			tn := &store.Tenant{ID: bootstrapTenant, Name: "Platform", Status: store.TenantActive,
				Settings: DefaultTenantSettings(), CreatedAt: now, UpdatedAt: now}
			if err := store.Insert(ctx, tx, tn); err != nil {
				return fmt.Errorf("create tenant %s: %w", bootstrapTenant, err)
			}
		}
		if err := store.Insert(ctx, tx, u); err != nil {
			return fmt.Errorf("create user %s: %w", bootstrapEmail, err)
		}
		if err := store.Insert(ctx, tx, t); err != nil {
			return fmt.Errorf("create bootstrap token: %w", err)
		}
		return nil
	})
	if errors.Is(err, errHasUsers) {
		return "", false, nil
	}
	if err != nil {
		// Another process may have bootstrapped concurrently; then there
		// is nothing left to do.
		if n, cerr := store.Count[store.User](ctx, s.db); cerr == nil && n > 0 {
			return "", false, nil
		}
		return "", false, fmt.Errorf("bootstrap: %w", err)
	}
	return secret, true, nil
}

// MintUserToken mints a new API token for the user with the given email
// (`sluice token create --user EMAIL`, e.g. to recover a lost admin token).
// It is run by the operator with access to the store, so no principal is
// checked; the audit log records the actor "cli" with the Administrator
// role.
func (s *Service) MintUserToken(ctx context.Context, email, name string) (secret string, err error) {
	email, err = normalizeEmail(email)
	if err != nil {
		return "", err
	}
	if name == "" {
		name = "cli"
	}
	u, err := store.Get[store.User](ctx, s.db, store.Eq("email", email))
	if err != nil {
		return "", notFound(err, "user")
	}
	if u.Status != store.UserActive {
		return "", apierr.Invalid("email", "user %s is disabled; its tokens would not be accepted", email)
	}
	p := &auth.Principal{Email: "cli", Role: auth.Administrator}
	ct, err := s.createUserToken(ctx, p, u, TokenInput{Name: name}, "user_token.create")
	if err != nil {
		return "", err
	}
	return ct.Secret, nil
}
