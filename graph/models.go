package graph

import (
	"time"

	"github.com/sluicehq/sluice/internal/admin"
)

// LogFilter is the GraphQL filter of the logs query (input LogFilterInput).
// Absent fields match everything.
type LogFilter struct {
	TenantID  string
	GatewayID string
	UserID    string
	Provider  string
	Model     string
	Status    int
	ErrorCode string
	Operation string
	Metadata  map[string]string
	From      *time.Time
	To        *time.Time
}

// query returns the domain query of the filter and page.
func (f *LogFilter) query(limit *int, cursor *string) admin.LogQuery {
	q := admin.LogQuery{Page: pageArgs(limit, cursor)}
	if f != nil {
		q.TenantID, q.GatewayID, q.UserID = f.TenantID, f.GatewayID, f.UserID
		q.Provider, q.Model, q.Status, q.ErrorCode = f.Provider, f.Model, f.Status, f.ErrorCode
		q.Operation, q.Metadata = f.Operation, f.Metadata
		q.Range = timeRange(f.From, f.To)
	}
	return q
}

// pageArgs builds a listing request from the optional limit and cursor
// arguments; zero values let the domain apply its defaults.
func pageArgs(limit *int, cursor *string) admin.Page {
	var pg admin.Page
	if limit != nil {
		pg.Limit = *limit
	}
	if cursor != nil {
		pg.Cursor = *cursor
	}
	return pg
}

// timeRange builds a time range from the optional from and to arguments; a
// zero bound lets the domain apply its default (the last 24 hours).
func timeRange(from, to *time.Time) admin.Range {
	var r admin.Range
	if from != nil {
		r.From = *from
	}
	if to != nil {
		r.To = *to
	}
	return r
}

// deref returns *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// auditFilter returns *f, or the empty filter.
func auditFilter(f *admin.AuditFilter) admin.AuditFilter {
	if f == nil {
		return admin.AuditFilter{}
	}
	return *f
}

// done answers true once a mutation without a result succeeded.
func done(err error) (bool, error) { return err == nil, err }
