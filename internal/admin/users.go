package admin

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/ids"
	"github.com/sluicehq/sluice/internal/store"
)

// UserInput creates a user. Password is optional: a user without one
// cannot sign in to the dashboard, but may still hold tokens.
type UserInput struct {
	Email     string           `json:"email"`
	Name      string           `json:"name"`
	Role      auth.Role        `json:"role"`
	Password  string           `json:"password"`
	Budget    *store.Budget    `json:"budget"`
	RateLimit *store.RateLimit `json:"rate_limit"`
}

// UserPatch changes a user; absent fields stay as they are. Budget is set
// with an object and removed with null.
type UserPatch struct {
	Name      *string                          `json:"name"`
	Email     *string                          `json:"email"`
	Role      *auth.Role                       `json:"role"`
	Status    *string                          `json:"status"`
	Password  *string                          `json:"password"`
	Budget    graphql.Omittable[*store.Budget] `json:"budget"`
	RateLimit *store.RateLimit                 `json:"rate_limit"`
}

// emailRE accepts the usual local@domain forms, including a single-label
// domain such as admin@localhost. It is applied to the lower-cased address.
var emailRE = regexp.MustCompile("^[a-z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$")

// normalizeEmail trims and lower-cases an email address and checks its form.
func normalizeEmail(e string) (string, error) {
	e = strings.ToLower(strings.TrimSpace(e))
	if e == "" {
		return "", apierr.Invalid("email", "email is required")
	}
	if len(e) > 254 {
		return "", apierr.Invalid("email", "email is longer than 254 bytes")
	}
	if at := strings.IndexByte(e, '@'); at > 64 || !emailRE.MatchString(e) {
		return "", apierr.Invalid("email", "email must be an address of the form name@domain")
	}
	return e, nil
}

func checkUserStatus(st string) error {
	if st != store.UserActive && st != store.UserDisabled {
		return apierr.Invalid("status", "status must be active or disabled")
	}
	return nil
}

// emailConflict turns a duplicate write into the 409 for the email.
// Emails are unique across the platform (sign-in is by email alone), so
// that an email is taken cannot be hidden altogether; but a caller other
// than the Administrator is not told the email back nor whether its holder
// is in its own tenant or another, each such answer is audited as denied
// (bounded per actor), and the writes that can meet one are rate-limited
// (checkEmailWrites): an enumeration is slow and shows in the audit log.
func (s *Service) emailConflict(ctx context.Context, p *auth.Principal, err error, email string) error {
	if ae, ok := apierr.From(err); !ok || ae.Code != apierr.CodeConflict {
		return err
	}
	if p.Role == auth.Administrator {
		return apierr.Conflict("email", "a user with email %q already exists", email)
	}
	s.recordDenied(ctx, p, &change{Action: "user.email_unavailable", ResourceType: "user", TenantID: p.TenantID,
		Changes: store.Changes{"email": email}})
	return apierr.Conflict("email", "this email address cannot be used; choose another one")
}

// maxEmailWritesPerMinute bounds, per caller other than the Administrator,
// the user creations and email changes a minute (the writes that can meet
// an email taken in another tenant).
const maxEmailWritesPerMinute = 30

// checkEmailWrites counts a write that sets an email and answers 429 when
// the caller is over maxEmailWritesPerMinute.
func (s *Service) checkEmailWrites(p *auth.Principal) error {
	if p.Role == auth.Administrator || s.emailWrites.allow(p.UserID, s.now()) {
		return nil
	}
	return apierr.New(http.StatusTooManyRequests, apierr.CodeRateLimitExceeded,
		"too many user creations and email changes (at most %d a minute); try again in a minute", maxEmailWritesPerMinute)
}

// user loads a user the principal may see, or answers 404. Operations on a
// user load it with userFor, which adds the rank rule.
func (s *Service) user(ctx context.Context, p *auth.Principal, id string) (*store.User, error) {
	u, err := store.Get[store.User](ctx, s.db, store.Eq("id", id))
	if isNotFound(err) {
		return nil, s.missing(ctx, p, "user", id, reasonNotFound)
	}
	if err != nil {
		return nil, notFound(err, "user")
	}
	if !p.SeesTenant(u.TenantID) {
		return nil, s.missing(ctx, p, "user", id, reasonOtherTenant)
	}
	return u, nil
}

// checkGrant refuses to give role to user userID ("" for a new user) unless
// the caller may grant it; a refusal is audited as denied.
func (s *Service) checkGrant(ctx context.Context, p *auth.Principal, op auth.Op, userID string, role auth.Role) error {
	if !role.Valid() {
		return apierr.Invalid("role", "role must be one of administrator, tenant_administrator, ai_manager, finance, member, viewer, demo_user")
	}
	if !p.Role.CanGrant(role) {
		s.recordDenied(ctx, p, &change{Action: string(op), ResourceType: "user", ResourceID: userID, TenantID: p.TenantID,
			Changes: store.Changes{"reason": "grant", "role": role}})
		return apierr.New(http.StatusForbidden, apierr.CodeForbidden, "the %s role may not grant the %s role", p.Role, role)
	}
	return nil
}

// deleteSessions deletes the session tokens of a user, except keep (the
// caller's own session, or "").
func deleteSessions(ctx context.Context, tx bun.Tx, userID, keep string) error {
	conds := []store.Cond{store.Eq("user_id", userID), store.Eq("kind", store.TokenSession)}
	if keep != "" {
		conds = append(conds, store.Ne("id", keep))
	}
	if _, err := store.Delete[store.Token](ctx, tx, conds...); err != nil {
		return fmt.Errorf("delete sessions of user %s: %w", userID, err)
	}
	return nil
}

// ListUsers lists the users of a tenant.
func (s *Service) ListUsers(ctx context.Context, p *auth.Principal, tenantID string, pg Page) (*List[store.User], error) {
	if err := s.can(ctx, p, auth.OpUserList); err != nil {
		return nil, err
	}
	if _, err := s.tenant(ctx, s.db, p, tenantID); err != nil {
		return nil, err
	}
	pg, err := checkPage(pg)
	if err != nil {
		return nil, err
	}
	rows, next, err := store.List(ctx, s.db, "id", func(u *store.User) string { return u.ID }, pg, store.Eq("tenant_id", tenantID))
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	for i := range rows {
		s.fillBudget(ctx, rows[i].Budget, "user:"+rows[i].ID)
	}
	return &List[store.User]{Data: rows, NextCursor: next}, nil
}

// CreateUser creates a user in a tenant. The caller may grant only roles at
// or below its own; emails are unique across all tenants.
func (s *Service) CreateUser(ctx context.Context, p *auth.Principal, tenantID string, in UserInput) (*store.User, error) {
	if err := s.can(ctx, p, auth.OpUserCreate); err != nil {
		return nil, err
	}
	t, err := s.tenant(ctx, s.db, p, tenantID)
	if err != nil {
		return nil, err
	}
	if t.Status == store.TenantDeleted {
		return nil, apierr.NotFound("tenant")
	}
	email, err := normalizeEmail(in.Email)
	if err != nil {
		return nil, err
	}
	if err := checkText("name", in.Name, 200, false); err != nil {
		return nil, err
	}
	if in.Role == "" {
		return nil, apierr.Invalid("role", "role is required")
	}
	if err := s.checkGrant(ctx, p, auth.OpUserCreate, "", in.Role); err != nil {
		return nil, err
	}
	now := s.now()
	u := &store.User{ID: ids.New("usr"), TenantID: tenantID, Email: email, Name: in.Name, Role: in.Role,
		Status: store.UserActive, CreatedAt: now, UpdatedAt: now}
	changes := store.Changes{"email": email, "name": in.Name, "role": in.Role}
	if in.Password != "" {
		if err := checkPassword(in.Password); err != nil {
			return nil, err
		}
		if u.PasswordHash, err = s.hash(ctx, in.Password); err != nil {
			return nil, err
		}
		changes["password"] = redacted
	}
	if in.Budget != nil {
		if err := checkBudget(in.Budget); err != nil {
			return nil, err
		}
		u.Budget, changes["budget"] = in.Budget, in.Budget
	}
	if in.RateLimit != nil {
		if err := checkRateLimit("rate_limit", in.RateLimit); err != nil {
			return nil, err
		}
		u.RateLimit, changes["rate_limit"] = *in.RateLimit, *in.RateLimit
	}
	c := &change{Action: "user.create", ResourceType: "user", ResourceID: u.ID, TenantID: tenantID, Changes: changes, Config: true}
	if err := s.checkEmailWrites(p); err != nil {
		return nil, err
	}
	if err := s.write(ctx, p, c, func(tx bun.Tx) error { return store.Insert(ctx, tx, u) }); err != nil {
		return nil, s.emailConflict(ctx, p, err, email)
	}
	s.fillBudget(ctx, u.Budget, "user:"+u.ID)
	return u, nil
}

// GetUser reads a user with its budget state.
func (s *Service) GetUser(ctx context.Context, p *auth.Principal, id string) (*store.User, error) {
	if err := s.can(ctx, p, auth.OpUserRead); err != nil {
		return nil, err
	}
	u, err := s.userFor(ctx, p, auth.OpUserRead, id)
	if err != nil {
		return nil, err
	}
	s.fillBudget(ctx, u.Budget, "user:"+u.ID)
	return u, nil
}

// UpdateUser changes a user. Nobody changes their own role or disables
// themselves; a caller may grant only roles at or below its own and may not
// change a user whose role outranks its own. A new password, a new role or
// disabling the user signs the user out of every dashboard session (the
// caller's own session survives its own password change).
func (s *Service) UpdateUser(ctx context.Context, p *auth.Principal, id string, in UserPatch) (*store.User, error) {
	if err := s.can(ctx, p, auth.OpUserUpdate); err != nil {
		return nil, err
	}
	u, err := s.userFor(ctx, p, auth.OpUserUpdate, id)
	if err != nil {
		return nil, err
	}
	self := u.ID == p.UserID
	changes := store.Changes{}
	var cols []string
	set := func(col string, v any) { cols, changes[col] = append(cols, col), v }
	revokeSessions := false
	if in.Name != nil {
		if err := checkText("name", *in.Name, 200, false); err != nil {
			return nil, err
		}
		u.Name = *in.Name
		set("name", u.Name)
	}
	if in.Email != nil {
		email, err := normalizeEmail(*in.Email)
		if err != nil {
			return nil, err
		}
		if err := s.checkEmailWrites(p); err != nil {
			return nil, err
		}
		u.Email = email
		set("email", email)
	}
	if in.Role != nil && *in.Role != u.Role {
		if self {
			s.recordDenied(ctx, p, &change{Action: string(auth.OpUserUpdate), ResourceType: "user", ResourceID: u.ID, TenantID: u.TenantID,
				Changes: store.Changes{"reason": "own_role", "role": *in.Role}})
			return nil, apierr.New(http.StatusForbidden, apierr.CodeForbidden, "you cannot change your own role")
		}
		if err := s.checkGrant(ctx, p, auth.OpUserUpdate, u.ID, *in.Role); err != nil {
			return nil, err
		}
		u.Role, revokeSessions = *in.Role, true
		set("role", u.Role)
	}
	if in.Status != nil && *in.Status != u.Status {
		if err := checkUserStatus(*in.Status); err != nil {
			return nil, err
		}
		if self && *in.Status == store.UserDisabled {
			return nil, apierr.Invalid("status", "you cannot disable yourself")
		}
		u.Status = *in.Status
		revokeSessions = revokeSessions || u.Status == store.UserDisabled
		set("status", u.Status)
	}
	keepSession := ""
	if in.Password != nil {
		if err := checkPassword(*in.Password); err != nil {
			return nil, err
		}
		if u.PasswordHash, err = s.hash(ctx, *in.Password); err != nil {
			return nil, err
		}
		cols, changes["password"] = append(cols, "password_hash"), redacted
		revokeSessions = true
		if self && p.Kind == auth.CredSession {
			keepSession = p.TokenID
		}
	}
	if b, ok := in.Budget.ValueOK(); ok {
		if b != nil {
			if err := checkBudget(b); err != nil {
				return nil, err
			}
		}
		u.Budget = b
		set("budget", b)
	}
	if in.RateLimit != nil {
		if err := checkRateLimit("rate_limit", in.RateLimit); err != nil {
			return nil, err
		}
		u.RateLimit = *in.RateLimit
		set("rate_limit", u.RateLimit)
	}
	if len(cols) > 0 {
		u.UpdatedAt = s.now()
		cols = append(cols, "updated_at")
		c := &change{Action: "user.update", ResourceType: "user", ResourceID: u.ID, TenantID: u.TenantID, Changes: changes, Config: true}
		err := s.write(ctx, p, c, func(tx bun.Tx) error {
			if err := store.Update(ctx, tx, u, cols...); err != nil {
				return err
			}
			if revokeSessions {
				return deleteSessions(ctx, tx, u.ID, keepSession)
			}
			return nil
		})
		if err != nil {
			return nil, s.emailConflict(ctx, p, err, u.Email)
		}
	}
	s.fillBudget(ctx, u.Budget, "user:"+u.ID)
	return u, nil
}

// DeleteUser deletes a user with its tokens (API tokens and sessions) and
// gateway assignments. Nobody deletes themselves.
func (s *Service) DeleteUser(ctx context.Context, p *auth.Principal, id string) error {
	if err := s.can(ctx, p, auth.OpUserDelete); err != nil {
		return err
	}
	u, err := s.userFor(ctx, p, auth.OpUserDelete, id)
	if err != nil {
		return err
	}
	if u.ID == p.UserID {
		return apierr.Invalid("id", "you cannot delete yourself")
	}
	c := &change{Action: "user.delete", ResourceType: "user", ResourceID: u.ID, TenantID: u.TenantID, Config: true,
		Changes: store.Changes{"email": u.Email}}
	return s.write(ctx, p, c, func(tx bun.Tx) error {
		return deleteInOrder("user "+id,
			func() (int64, error) { return store.Delete[store.Token](ctx, tx, store.Eq("user_id", id)) },
			func() (int64, error) { return store.Delete[store.UserGateway](ctx, tx, store.Eq("user_id", id)) },
			func() (int64, error) { return store.Delete[store.User](ctx, tx, store.Eq("id", id)) })
	})
}

// DeleteUserBudget removes a user's budget.
func (s *Service) DeleteUserBudget(ctx context.Context, p *auth.Principal, id string) error {
	if err := s.can(ctx, p, auth.OpUserBudgetDelete); err != nil {
		return err
	}
	u, err := s.userFor(ctx, p, auth.OpUserBudgetDelete, id)
	if err != nil {
		return err
	}
	if u.Budget == nil {
		return nil
	}
	u.Budget, u.UpdatedAt = nil, s.now()
	c := &change{Action: "user.budget.delete", ResourceType: "user", ResourceID: u.ID, TenantID: u.TenantID, Config: true,
		Changes: store.Changes{"budget": nil}}
	return s.write(ctx, p, c, func(tx bun.Tx) error { return store.Update(ctx, tx, u, "budget", "updated_at") })
}

// ListUserGateways lists the gateways assigned to a user.
func (s *Service) ListUserGateways(ctx context.Context, p *auth.Principal, userID string) (*List[store.Gateway], error) {
	if err := s.can(ctx, p, auth.OpUserGatewayList); err != nil {
		return nil, err
	}
	u, err := s.userFor(ctx, p, auth.OpUserGatewayList, userID)
	if err != nil {
		return nil, err
	}
	as, err := store.All[store.UserGateway](ctx, s.db, "gateway_id", store.Eq("user_id", u.ID))
	if err != nil {
		return nil, fmt.Errorf("list assignments of user %s: %w", u.ID, err)
	}
	out := &List[store.Gateway]{Data: []store.Gateway{}}
	if len(as) == 0 {
		return out, nil
	}
	gwIDs := make([]string, len(as))
	for i, a := range as {
		gwIDs[i] = a.GatewayID
	}
	out.Data, err = store.All[store.Gateway](ctx, s.db, "id", store.In("id", gwIDs), store.Eq("tenant_id", u.TenantID))
	if err != nil {
		return nil, fmt.Errorf("list gateways of user %s: %w", u.ID, err)
	}
	for i := range out.Data {
		s.fillBudget(ctx, out.Data[i].Budget, "gateway:"+out.Data[i].ID)
	}
	return out, nil
}

// assignment loads the user (changeable by p for op) and a gateway of the
// user's tenant, answering 404 for either.
func (s *Service) assignment(ctx context.Context, p *auth.Principal, op auth.Op, userID, gatewayID string) (*store.User, *store.Gateway, error) {
	u, err := s.userFor(ctx, p, op, userID)
	if err != nil {
		return nil, nil, err
	}
	g, err := s.gateway(ctx, s.db, p, gatewayID)
	if err != nil {
		return nil, nil, err
	}
	if g.TenantID != u.TenantID {
		return nil, nil, apierr.NotFound("gateway")
	}
	return u, g, nil
}

// AssignGateway lets a user's tokens call a gateway of its tenant. It is
// idempotent.
func (s *Service) AssignGateway(ctx context.Context, p *auth.Principal, userID, gatewayID string) error {
	if err := s.can(ctx, p, auth.OpUserGatewayAssign); err != nil {
		return err
	}
	u, g, err := s.assignment(ctx, p, auth.OpUserGatewayAssign, userID, gatewayID)
	if err != nil {
		return err
	}
	ug := &store.UserGateway{UserID: u.ID, GatewayID: g.ID, TenantID: u.TenantID, CreatedAt: s.now()}
	c := &change{Action: "user_gateway.assign", ResourceType: "user", ResourceID: u.ID, TenantID: u.TenantID, Config: true,
		Changes: store.Changes{"gateway_id": g.ID}}
	return s.write(ctx, p, c, func(tx bun.Tx) error {
		return store.AssignGateway(ctx, tx, ug)
	})
}

// UnassignGateway removes a gateway assignment; a missing one answers 404.
func (s *Service) UnassignGateway(ctx context.Context, p *auth.Principal, userID, gatewayID string) error {
	if err := s.can(ctx, p, auth.OpUserGatewayUnassign); err != nil {
		return err
	}
	u, g, err := s.assignment(ctx, p, auth.OpUserGatewayUnassign, userID, gatewayID)
	if err != nil {
		return err
	}
	c := &change{Action: "user_gateway.unassign", ResourceType: "user", ResourceID: u.ID, TenantID: u.TenantID, Config: true,
		Changes: store.Changes{"gateway_id": g.ID}}
	return s.write(ctx, p, c, func(tx bun.Tx) error {
		n, err := store.Delete[store.UserGateway](ctx, tx, store.Eq("user_id", u.ID), store.Eq("gateway_id", g.ID))
		if err != nil {
			return fmt.Errorf("unassign gateway %s from user %s: %w", g.ID, u.ID, err)
		}
		if n == 0 {
			return apierr.NotFound("assignment")
		}
		return nil
	})
}
