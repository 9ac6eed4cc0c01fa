package rest

import (
	"net/http"

	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/auth"
)

// accountRoutes registers the caller's own account (My Account) and the
// dashboard's sign-in and sign-out (CONTRACT §4).
func (a *adminAPI) accountRoutes(rt *Router) {
	rt.Handle(http.MethodGet, "/admin/v1/me", a.me)
	rt.Handle(http.MethodGet, "/admin/v1/me/tokens", a.listMyTokens)
	rt.Handle(http.MethodPost, "/admin/v1/me/tokens", a.createMyToken)
	rt.Handle(http.MethodDelete, "/admin/v1/me/tokens/{token}", a.deleteMyToken)
	rt.Handle(http.MethodPost, "/admin/v1/me/password", a.changeMyPassword)

	rt.Handle(http.MethodPost, sessionPath, a.createSession)
	rt.Handle(http.MethodDelete, sessionPath, a.deleteSession)
}

func (a *adminAPI) me(w http.ResponseWriter, r *http.Request, _ Params) error {
	ctx, p := r.Context(), auth.From(r.Context())
	u, err := a.svc.Me(ctx, p)
	return writeObject(w, http.StatusOK, u, err)
}

func (a *adminAPI) listMyTokens(w http.ResponseWriter, r *http.Request, _ Params) error {
	ctx, p := r.Context(), auth.From(r.Context())
	pg, err := pageOf(r)
	if err != nil {
		return a.refuse(r, auth.OpMeTokenList, refNone, "", err)
	}
	l, err := a.svc.ListMyTokens(ctx, p, pg)
	return writeList(w, l, err)
}

func (a *adminAPI) createMyToken(w http.ResponseWriter, r *http.Request, _ Params) error {
	ctx, p := r.Context(), auth.From(r.Context())
	var in admin.TokenInput
	if err := DecodeJSON(r, &in); err != nil {
		return a.refuse(r, auth.OpMeTokenCreate, refNone, "", err)
	}
	t, err := a.svc.CreateMyToken(ctx, p, in)
	return writeObject(w, http.StatusCreated, t, err)
}

func (a *adminAPI) deleteMyToken(w http.ResponseWriter, r *http.Request, ps Params) error {
	ctx, p := r.Context(), auth.From(r.Context())
	return writeNoContent(w, a.svc.DeleteMyToken(ctx, p, ps.Get("token")))
}

// changeMyPassword changes the caller's own password: the body is
// {"current_password","new_password"}; 204 on success.
func (a *adminAPI) changeMyPassword(w http.ResponseWriter, r *http.Request, _ Params) error {
	ctx, p := r.Context(), auth.From(r.Context())
	var in admin.PasswordChange
	if err := DecodeJSON(r, &in); err != nil {
		return a.refuse(r, auth.OpMePasswordChange, refNone, "", err)
	}
	return writeNoContent(w, a.svc.ChangeMyPassword(ctx, p, in))
}

// signIn is the body of POST /admin/v1/session.
type signIn struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// createSession signs a user in with email and password. It is the one
// route served without a credential, so there is no principal to
// authorise: the service checks the password and limits the attempts per
// email and client IP.
func (a *adminAPI) createSession(w http.ResponseWriter, r *http.Request, _ Params) error {
	var in signIn
	if err := DecodeJSON(r, &in); err != nil {
		return err
	}
	s, err := a.svc.CreateSession(r.Context(), in.Email, in.Password, clientIP(r.RemoteAddr))
	return writeObject(w, http.StatusCreated, s, err)
}

// deleteSession signs out: it revokes the session the request is
// authenticated with. Every signed-in principal may sign itself out.
func (a *adminAPI) deleteSession(w http.ResponseWriter, r *http.Request, _ Params) error {
	return writeNoContent(w, a.svc.DeleteSession(r.Context(), auth.From(r.Context())))
}
