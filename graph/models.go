package graph

import (
	"context"
	"slices"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/admin"
	"github.com/sluicehq/sluice/internal/money"
)

// LogFilter is the GraphQL filter of the logs query (input LogFilterInput).
// Absent fields match everything.
type LogFilter struct {
	TenantID     string
	GatewayID    string
	UserID       string
	TokenID      string
	Provider     string
	Model        string
	Status       int
	StatusClass  string
	ErrorCode    string
	Operation    string
	Metadata     map[string]string
	Search       string
	MinLatencyMs *int64
	MaxLatencyMs *int64
	MinCostUsd   *money.USD
	MaxCostUsd   *money.USD
	From         *time.Time
	To           *time.Time
}

// LogSort is the order of the logs query (input LogSortInput).
type LogSort struct {
	By, Order string
}

// query returns the domain query of the filter, order and page.
func (f *LogFilter) query(sort *LogSort, limit *int, cursor *string) admin.LogQuery {
	q := admin.LogQuery{Page: pageArgs(limit, cursor)}
	if f != nil {
		q.TenantID, q.GatewayID, q.UserID, q.TokenID = f.TenantID, f.GatewayID, f.UserID, f.TokenID
		q.Provider, q.Model, q.Status, q.StatusClass, q.ErrorCode = f.Provider, f.Model, f.Status, f.StatusClass, f.ErrorCode
		q.Operation, q.Metadata, q.Search = f.Operation, f.Metadata, f.Search
		q.LatencyMS = analytics.Bounds{Min: f.MinLatencyMs, Max: f.MaxLatencyMs}
		q.CostUSD = analytics.Bounds{Min: (*int64)(f.MinCostUsd), Max: (*int64)(f.MaxCostUsd)}
		q.Range = timeRange(f.From, f.To)
	}
	if sort != nil {
		q.SortBy, q.Order = sort.By, sort.Order
	}
	return q
}

// selected reports whether the query selects field on the result of the
// field being resolved (so that a costly figure is computed only when
// asked for).
func selected(ctx context.Context, field string) bool {
	return slices.Contains(graphql.CollectAllFields(ctx), field)
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
