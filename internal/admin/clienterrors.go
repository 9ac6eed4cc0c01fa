package admin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/ids"
	"github.com/sluicehq/sluice/internal/store"
)

// ClientErrorInput is an error the dashboard reports.
type ClientErrorInput struct {
	Message   string         `json:"message"`
	Stack     string         `json:"stack"`
	URL       string         `json:"url"`
	Release   string         `json:"release"`
	UserAgent string         `json:"user_agent"`
	Context   map[string]any `json:"context"`
}

// Accepted answers an accepted report (202).
type Accepted struct {
	ID string `json:"id"`
}

// maxClientErrorBytes bounds a report, once JSON-encoded, and each of its
// text fields: a stack trace fits, a dump of the page does not.
const maxClientErrorBytes = 16 << 10

// tokenSecretRE finds Sluice token secrets, which a dashboard error may
// carry (a request URL, a failed fetch); they are masked before storing.
var tokenSecretRE = regexp.MustCompile(`sk-sl-[0-9A-Za-z]{8,}`)

// ReportClientError records an error of the dashboard. Reports are
// deduplicated by fingerprint (tenant, message, first stack line, URL path):
// a repeat counts up the existing report and answers its id. Reports are
// rate-limited per caller and, not being configuration, not audited.
func (s *Service) ReportClientError(ctx context.Context, p *auth.Principal, in ClientErrorInput) (*Accepted, error) {
	if err := s.can(ctx, p, auth.OpClientErrorCreate); err != nil {
		return nil, err
	}
	ce, err := cleanClientError(in)
	if err != nil {
		return nil, err
	}
	now := s.now()
	if !s.errs.allow(p.UserID, now) {
		return nil, apierr.New(http.StatusTooManyRequests, apierr.CodeRateLimitExceeded, "too many client error reports; try again in a minute")
	}
	ce.TenantID, ce.UserID = p.TenantID, p.UserID
	ce.Fingerprint = clientErrorFingerprint(ce)
	// Two attempts: a concurrent first report of the same fingerprint makes
	// the insert fail as a duplicate, and the second round counts it up.
	for range 2 {
		id, found, err := store.CountClientError(ctx, s.db, ce.Fingerprint, now)
		if err != nil {
			return nil, err
		}
		if found {
			return &Accepted{ID: id}, nil
		}
		ce.ID, ce.TS, ce.LastSeenAt, ce.Count = ids.New("cerr"), now, now, 1
		err = store.Insert(ctx, s.db, ce)
		if err == nil {
			return &Accepted{ID: ce.ID}, nil
		}
		if !errors.Is(err, store.ErrDuplicate) {
			return nil, fmt.Errorf("insert client error: %w", err)
		}
	}
	return nil, errors.New("record client error: fingerprint neither updatable nor insertable")
}

// cleanClientError validates a report and masks token secrets in it.
func cleanClientError(in ClientErrorInput) (*store.ClientError, error) {
	if strings.TrimSpace(in.Message) == "" {
		return nil, apierr.Invalid("message", "message is required")
	}
	for _, f := range []struct{ param, v string }{
		{"message", in.Message}, {"stack", in.Stack}, {"url", in.URL}, {"release", in.Release}, {"user_agent", in.UserAgent},
	} {
		if len(f.v) > maxClientErrorBytes {
			return nil, apierr.Invalid(f.param, "%s is longer than %d bytes", f.param, maxClientErrorBytes)
		}
		if !utf8.ValidString(f.v) || strings.ContainsRune(f.v, 0) {
			return nil, apierr.Invalid(f.param, "%s is not valid UTF-8 text", f.param)
		}
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, apierr.Invalid("context", "context cannot be encoded as JSON")
	}
	if len(raw) > maxClientErrorBytes {
		return nil, apierr.Invalid("", "the report is longer than %d bytes", maxClientErrorBytes)
	}
	// Masking on the encoded form reaches every string, context included;
	// the replacement keeps the JSON valid.
	raw = tokenSecretRE.ReplaceAll(raw, []byte("sk-sl-[REDACTED]"))
	var clean ClientErrorInput
	if err := json.Unmarshal(raw, &clean); err != nil {
		return nil, fmt.Errorf("decode masked client error: %w", err)
	}
	ctxMap := store.Changes(clean.Context)
	if ctxMap == nil {
		ctxMap = store.Changes{}
	}
	return &store.ClientError{
		Message: clean.Message, Stack: clean.Stack, URL: clean.URL, Release: clean.Release,
		UserAgent: clean.UserAgent, Context: ctxMap,
	}, nil
}

// clientErrorFingerprint is the dedup key: sha256 of tenant, message, the
// first line of the stack and the path of the URL (queries and ids in the
// host part do not split one error into many).
func clientErrorFingerprint(ce *store.ClientError) string {
	first, _, _ := strings.Cut(ce.Stack, "\n")
	path := ce.URL
	if u, err := url.Parse(ce.URL); err == nil {
		path = u.Path
	}
	sum := sha256.Sum256([]byte(ce.TenantID + "|" + ce.Message + "|" + strings.TrimSpace(first) + "|" + path))
	return hex.EncodeToString(sum[:])
}

// ListClientErrors lists the reported client errors, newest first.
func (s *Service) ListClientErrors(ctx context.Context, p *auth.Principal, pg Page) (*List[store.ClientError], error) {
	if err := s.can(ctx, p, auth.OpClientErrorList); err != nil {
		return nil, err
	}
	pg, err := checkPage(pg)
	if err != nil {
		return nil, err
	}
	rows, next, err := store.ListClientErrors(ctx, s.db, pg)
	if err != nil {
		return nil, err
	}
	return &List[store.ClientError]{Data: rows, NextCursor: next}, nil
}
