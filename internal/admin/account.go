package admin

import (
	"context"
	"errors"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/store"
)

// PasswordChange is the caller's change of its own password: the current
// one, checked, and the new one, held to the policy of every new password.
type PasswordChange struct {
	Current string `json:"current_password"`
	New     string `json:"new_password"`
}

// ChangeMyPassword sets the caller's own password after checking the
// current one. The attempt counts on the sign-in limits of the caller's
// email and address (a wrong current password is a guess like a wrong
// sign-in), the check runs in a hash slot, and a wrong current password is
// audited as denied. On success every other dashboard session of the user
// ends (the caller's own, when it is one, survives) and the audit row
// names the change without the password.
func (s *Service) ChangeMyPassword(ctx context.Context, p *auth.Principal, in PasswordChange) error {
	if err := s.can(ctx, p, auth.OpMePasswordChange); err != nil {
		return err
	}
	if len(in.Current) > maxPasswordLen {
		return apierr.Invalid("current_password", "current_password is longer than %d bytes", maxPasswordLen)
	}
	if err := checkPassword(in.New); err != nil {
		var ae *apierr.Error
		if errors.As(err, &ae) {
			return ae.WithParam("new_password")
		}
		return err
	}
	if in.New == in.Current {
		return apierr.Invalid("new_password", "the new password must differ from the current one")
	}
	if err := s.logins.admit(p.Email, p.IP, s.now()); err != nil {
		return err
	}
	u, err := s.me(ctx, p)
	if err != nil {
		return err
	}
	hash := dummyHash
	if u.PasswordHash != "" {
		hash = u.PasswordHash
	}
	match, err := s.verify(ctx, hash, in.Current)
	if err != nil {
		return err
	}
	if !match || u.PasswordHash == "" {
		s.recordDenied(ctx, p, &change{Action: string(auth.OpMePasswordChange), ResourceType: "user", ResourceID: u.ID, TenantID: u.TenantID,
			Changes: store.Changes{"reason": "wrong_password"}})
		return apierr.Invalid("current_password", "the current password is incorrect")
	}
	if u.PasswordHash, err = s.hash(ctx, in.New); err != nil {
		return err
	}
	u.UpdatedAt = s.now()
	keep := ""
	if p.Kind == auth.CredSession {
		keep = p.TokenID
	}
	c := &change{Action: string(auth.OpMePasswordChange), ResourceType: "user", ResourceID: u.ID, TenantID: u.TenantID,
		Changes: store.Changes{"password": redacted}}
	return s.write(ctx, p, c, func(tx bun.Tx) error {
		if err := store.Update(ctx, tx, u, "password_hash", "updated_at"); err != nil {
			return err
		}
		return deleteSessions(ctx, tx, u.ID, keep)
	})
}
