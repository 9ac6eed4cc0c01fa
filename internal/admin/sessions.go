package admin

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/ids"
	"github.com/sluicehq/sluice/internal/store"
)

// Session is a signed-in dashboard session: its secret (shown once), its
// expiry and the signed-in user.
type Session struct {
	Token     string      `json:"token"`
	ExpiresAt time.Time   `json:"expires_at"`
	User      *store.User `json:"user"`
}

// maxSecretLen bounds presented credentials; longer ones are refused before
// any work is done.
const maxSecretLen = 512

// lastUsedEvery is how often the use of a token is written back: at most
// once a minute per token, so that authentication is not a write per call.
const lastUsedEvery = time.Minute

func errInvalidCredentials() error {
	return apierr.Unauthenticated(apierr.CodeInvalidCredentials, "email or password is incorrect")
}

func errInvalidToken(msg string) error { return apierr.Unauthenticated(apierr.CodeInvalidToken, msg) }

// CreateSession signs a user in with email and password and returns a
// session token for the admin API, valid for Config.SessionTTL. The email
// and password are bounded before anything else is done; attempts are then
// limited per client address, per email and address, and per email
// (SignInLimits), and the password is checked in one of a few hash slots
// (503 when they are all taken). An unknown email, a wrong password, a user
// without a password, a disabled user and a user of an inactive tenant all
// answer the same 401, after the same limits and the same password work, so
// that neither the answer nor its timing tells them apart.
func (s *Service) CreateSession(ctx context.Context, email, password, ip string) (*Session, error) {
	now := s.now()
	email = strings.ToLower(strings.TrimSpace(email))
	if len(email) > maxEmailLen {
		return nil, apierr.Invalid("email", "email is longer than %d bytes", maxEmailLen)
	}
	if len(password) > maxPasswordLen {
		return nil, apierr.Invalid("password", "password is longer than %d bytes", maxPasswordLen)
	}
	if err := s.logins.admit(email, ip, now); err != nil {
		return nil, err
	}
	u, err := store.Get[store.User](ctx, s.db, store.Eq("email", email))
	if err != nil && !isNotFound(err) {
		return nil, fmt.Errorf("sign in: %w", err)
	}
	hash := dummyHash
	if u != nil && u.PasswordHash != "" {
		hash = u.PasswordHash
	}
	match, err := s.verify(ctx, hash, password)
	if err != nil {
		return nil, err
	}
	if !match || u == nil || u.PasswordHash == "" || u.Status != store.UserActive {
		return nil, errInvalidCredentials()
	}
	if active, err := s.tenantActive(ctx, u); err != nil {
		return nil, err
	} else if !active {
		return nil, errInvalidCredentials()
	}

	t, secret := newToken(store.TokenSession, u.TenantID, nil, &u.ID, "session", now)
	exp := now.Add(s.cfg.SessionTTL)
	t.ExpiresAt = &exp
	u.LastSeenAt = &now
	p := &auth.Principal{UserID: u.ID, Email: u.Email, TenantID: u.TenantID, Role: u.Role, TokenID: t.ID, Kind: auth.CredSession, IP: ip}
	c := &change{Action: "session.create", ResourceType: "session", ResourceID: t.ID, TenantID: u.TenantID,
		Changes: store.Changes{"expires_at": exp}}
	err = s.write(ctx, p, c, func(tx bun.Tx) error {
		// Expired sessions of the user are of no use to anyone: drop them
		// here, so that the table does not grow with every sign-in.
		if err := store.DeleteExpiredTokens(ctx, tx, u.ID, store.TokenSession, now, true); err != nil {
			return err
		}
		if err := store.Insert(ctx, tx, t); err != nil {
			return err
		}
		return store.Update(ctx, tx, u, "last_seen_at")
	})
	if err != nil {
		return nil, err
	}
	s.logins.succeeded(email, ip, now)
	s.fillBudget(ctx, u.Budget, "user:"+u.ID)
	return &Session{Token: secret, ExpiresAt: exp, User: u}, nil
}

// isNotFound reports whether err is the store's not-found sentinel.
func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

// tenantActive reports whether the user may act: its tenant is active, or
// it is an Administrator, who acts across all tenants and must not be
// locked out by the state of its own.
func (s *Service) tenantActive(ctx context.Context, u *store.User) (bool, error) {
	if u.Role == auth.Administrator {
		return true, nil
	}
	t, err := store.Get[store.Tenant](ctx, s.db, store.Eq("id", u.TenantID))
	if isNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read tenant of user %s: %w", u.ID, err)
	}
	return t.Status == store.TenantActive, nil
}

// DeleteSession signs the caller out: it deletes the session token the
// caller authenticated with. A caller using an API token gets 400: API
// tokens are deleted as tokens.
func (s *Service) DeleteSession(ctx context.Context, p *auth.Principal) error {
	if p == nil {
		return apierr.Unauthenticated(apierr.CodeMissingToken, "an admin credential is required")
	}
	if p.Kind != auth.CredSession {
		return apierr.Invalid("token", "only a dashboard session can be signed out; delete an API token with DELETE /admin/v1/me/tokens/{token}")
	}
	c := &change{Action: "session.delete", ResourceType: "session", ResourceID: p.TokenID, TenantID: p.TenantID}
	return s.write(ctx, p, c, func(tx bun.Tx) error {
		_, err := store.Delete[store.Token](ctx, tx, store.Eq("id", p.TokenID), store.Eq("user_id", p.UserID), store.Eq("kind", store.TokenSession))
		return err
	})
}

// printableSecret reports whether a presented secret could be one: at most
// maxSecretLen bytes of printable ASCII without spaces.
func printableSecret(secret string) bool {
	if len(secret) > maxSecretLen {
		return false
	}
	for i := 0; i < len(secret); i++ {
		if c := secret[i]; c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

// Authenticate resolves the secret of an admin credential (a user token or
// a dashboard session) to its principal. Gateway and playground tokens,
// revoked and expired tokens, and tokens of missing or disabled users are
// refused with 401; so are tokens of users of an inactive tenant, except
// Administrators. The secret is looked up by its hash and never appears in
// SQL, an error or a log line. Concurrent calls with one secret share one
// lookup (authFlights), so a stampede of requests with a cold or unknown
// token costs the store one query per distinct token, not one per request.
func (s *Service) Authenticate(ctx context.Context, secret string) (*auth.Principal, error) {
	if secret == "" {
		return nil, apierr.Unauthenticated(apierr.CodeMissingToken, "an admin credential is required")
	}
	if !printableSecret(secret) {
		return nil, errInvalidToken("the token is not valid")
	}
	return s.auths.do(ctx, ids.Hash(secret), func(ctx context.Context, h string) (*auth.Principal, error) {
		return s.authenticate(ctx, h)
	})
}

// authenticate resolves the hash h of a presented secret to its principal.
func (s *Service) authenticate(ctx context.Context, h string) (*auth.Principal, error) {
	t, err := store.Get[store.Token](ctx, s.db, store.Eq("hash", h))
	if isNotFound(err) {
		return nil, errInvalidToken("the token is not valid")
	}
	if err != nil {
		return nil, fmt.Errorf("look up token: %w", err)
	}
	if !sameHash(t.Hash, h) {
		return nil, errInvalidToken("the token is not valid")
	}
	var kind auth.CredentialKind
	switch t.Kind {
	case store.TokenUser:
		kind = auth.CredUserToken
	case store.TokenSession:
		kind = auth.CredSession
	case store.TokenGateway:
		return nil, errInvalidToken("gateway tokens are not valid on the admin API")
	case store.TokenPlayground:
		return nil, errInvalidToken("playground tokens are not valid on the admin API")
	default:
		return nil, errInvalidToken("the token is not valid")
	}
	if t.Revoked {
		return nil, errInvalidToken("the token has been revoked")
	}
	now := s.now()
	if t.ExpiresAt != nil && !now.Before(*t.ExpiresAt) {
		return nil, apierr.Unauthenticated(apierr.CodeTokenExpired, "the token has expired")
	}
	if t.UserID == nil {
		return nil, errInvalidToken("the token is not valid")
	}
	u, err := store.Get[store.User](ctx, s.db, store.Eq("id", *t.UserID))
	if isNotFound(err) {
		return nil, errInvalidToken("the token is not valid")
	}
	if err != nil {
		return nil, fmt.Errorf("read user of token %s: %w", t.ID, err)
	}
	if u.Status != store.UserActive {
		return nil, errInvalidToken("the token's user is disabled")
	}
	if active, err := s.tenantActive(ctx, u); err != nil {
		return nil, err
	} else if !active {
		return nil, errInvalidToken("the token's tenant is not active")
	}
	if t.LastUsedAt == nil || now.Sub(*t.LastUsedAt) >= lastUsedEvery {
		s.touch(ctx, t, u, now)
	}
	return &auth.Principal{UserID: u.ID, Email: u.Email, TenantID: u.TenantID, Role: u.Role, TokenID: t.ID, Kind: kind}, nil
}

// sameHash reports whether two token hashes are equal, in time that does
// not depend on where they differ. The lookup is by the SHA-256 of the
// whole presented secret, so no prefix of a secret ever meets a
// comparison; this check after the lookup keeps it so should the lookup
// ever match loosely (a collation, a prefix index).
func sameHash(stored, presented string) bool {
	return subtle.ConstantTimeCompare([]byte(stored), []byte(presented)) == 1
}

// touch records the use of a token and its user. It is best effort: a
// failure is logged and does not refuse the request.
func (s *Service) touch(ctx context.Context, t *store.Token, u *store.User, now time.Time) {
	t.LastUsedAt, u.LastSeenAt = &now, &now
	err := s.st.InTx(ctx, func(tx bun.Tx) error {
		if err := store.Update(ctx, tx, t, "last_used_at"); err != nil {
			return err
		}
		return store.Update(ctx, tx, u, "last_seen_at")
	})
	if err != nil {
		s.log.WarnContext(ctx, "record token use", "token_id", t.ID, "err", err)
	}
}
