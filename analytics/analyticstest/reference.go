package analyticstest

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/money"
)

// ref is the reference implementation: the definitions of backend.go
// computed over the records in memory, as plainly as possible.
type ref struct {
	recs   []*analytics.Record
	events []eventOf // every guardrail event with its record
}

type eventOf struct {
	ev  analytics.GuardrailEvent
	rec *analytics.Record
}

func newRef(recs []*analytics.Record) *ref {
	r := &ref{recs: recs}
	for _, rec := range recs {
		for _, ev := range rec.Events {
			r.events = append(r.events, eventOf{ev, rec})
		}
	}
	return r
}

// without returns the reference minus the records drop selects, and minus
// the events of the records' tenants that dropEvent selects.
func (r *ref) without(drop func(*analytics.Record) bool, dropEvent func(analytics.GuardrailEvent) bool) *ref {
	out := &ref{}
	for _, rec := range r.recs {
		if !drop(rec) {
			out.recs = append(out.recs, rec)
		}
	}
	for _, e := range r.events {
		if !dropEvent(e.ev) {
			out.events = append(out.events, e)
		}
	}
	return out
}

func inRange(ts time.Time, q analytics.Query) bool { return !ts.Before(q.From) && ts.Before(q.To) }

func matches(rec *analytics.Record, q analytics.Query) bool {
	return (q.TenantID == "" || rec.TenantID == q.TenantID) &&
		(q.GatewayID == "" || rec.GatewayID == q.GatewayID) &&
		(q.UserID == "" || rec.UserID == q.UserID) &&
		inRange(rec.TS, q)
}

func (r *ref) filter(q analytics.Query) []*analytics.Record {
	var out []*analytics.Record
	for _, rec := range r.recs {
		if matches(rec, q) {
			out = append(out, rec)
		}
	}
	return out
}

// nearestRank is the value at 1-based rank ceil(q·n) of the ascending
// values, the rank computed in integers from q in permille.
func nearestRank(sorted []int64, permille int) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := (n*permille + 999) / 1000
	return float64(sorted[rank-1])
}

func latency(recs []*analytics.Record) analytics.Latency {
	v := make([]int64, len(recs))
	for i, rec := range recs {
		v[i] = rec.LatencyMS
	}
	slices.Sort(v)
	return analytics.Latency{P50: nearestRank(v, 500), P95: nearestRank(v, 950), P99: nearestRank(v, 990)}
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func group(key string, recs []*analytics.Record) analytics.Group {
	g := analytics.Group{Key: key, LatencyMS: latency(recs)}
	for _, rec := range recs {
		g.Requests++
		if rec.Status >= 400 {
			g.Errors++
		}
		g.TokensIn += rec.TokensIn
		g.TokensOut += rec.TokensOut
		g.CostUSD += rec.CostUSD
		if analytics.IsUnpriced(rec) {
			g.UnpricedRequests++
		}
	}
	return g
}

func (r *ref) stats(q analytics.Query) *analytics.Stats {
	recs := r.filter(q)
	g := group("", recs)
	s := &analytics.Stats{From: q.From, To: q.To, Requests: g.Requests, Errors: g.Errors,
		TokensIn: g.TokensIn, TokensOut: g.TokensOut, CostUSD: g.CostUSD, LatencyMS: g.LatencyMS,
		UnpricedRequests: g.UnpricedRequests}
	for _, rec := range recs {
		if rec.Cache == "HIT" {
			s.Cached++
		}
	}
	s.CacheHitRate = ratio(s.Cached, s.Requests)
	by := map[string]int64{}
	for _, rec := range recs {
		if analytics.IsRefusal(rec) {
			by[rec.ErrorCode]++
		}
	}
	var reasons []analytics.ReasonCount
	for code, n := range by {
		reasons = append(reasons, analytics.ReasonCount{Reason: code, Count: n})
	}
	s.SetRefusals(reasons)
	return s
}

func truncate(t time.Time, interval string) time.Time {
	switch interval {
	case "minute":
		return t.Truncate(time.Minute)
	case "hour":
		return t.Truncate(time.Hour)
	}
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

func step(interval string) time.Duration {
	switch interval {
	case "minute":
		return time.Minute
	case "hour":
		return time.Hour
	}
	return 24 * time.Hour
}

// buckets returns one zero point per bucket from the bucket holding From up
// to To (exclusive), and the index of a time's bucket.
func buckets(q analytics.Query, interval string) ([]analytics.Point, func(time.Time) int) {
	first := truncate(q.From.UTC(), interval)
	var pts []analytics.Point
	for b := first; b.Before(q.To); b = b.Add(step(interval)) {
		pts = append(pts, analytics.Point{TS: b})
	}
	if pts == nil {
		pts = []analytics.Point{}
	}
	return pts, func(t time.Time) int { return int(truncate(t, interval).Sub(first) / step(interval)) }
}

func (r *ref) timeseries(q analytics.Query, interval string) *analytics.Timeseries {
	pts, idx := buckets(q, interval)
	inBucket := make([][]*analytics.Record, len(pts))
	for _, rec := range r.filter(q) {
		i := idx(rec.TS)
		inBucket[i] = append(inBucket[i], rec)
		p := &pts[i]
		p.Requests++
		if rec.Status >= 400 {
			p.Errors++
		}
		if rec.Cache == "HIT" {
			p.Cached++
		}
		p.TokensIn += rec.TokensIn
		p.TokensOut += rec.TokensOut
		p.CostUSD += rec.CostUSD
		p.CacheSavedUSD += rec.CacheSavedUSD
	}
	for i := range pts {
		pts[i].LatencyMS = latency(inBucket[i])
	}
	return &analytics.Timeseries{Interval: interval, Points: pts}
}

// seriesKey is the group of rec in a GroupTimeseries by by, and false
// when rec is in none (error_reason groups the errors only).
func seriesKey(rec *analytics.Record, by string) (string, bool) {
	if by != analytics.GroupErrorReason {
		return groupKey(rec, by), true
	}
	switch {
	case rec.Status < 400:
		return "", false
	case analytics.IsRefusal(rec):
		return rec.ErrorCode, true
	}
	return analytics.ReasonUpstream, true
}

func (r *ref) groupTimeseries(q analytics.Query, by, interval string, limit int) *analytics.GroupTimeseries {
	pts, idx := buckets(q, interval)
	series := map[string]*analytics.Series{}
	var keys []string
	for _, rec := range r.filter(q) {
		k, ok := seriesKey(rec, by)
		if !ok {
			continue
		}
		s := series[k]
		if s == nil {
			s = &analytics.Series{Key: k, Points: make([]analytics.SeriesPoint, len(pts))}
			for i := range pts {
				s.Points[i].TS = pts[i].TS
			}
			series[k] = s
			keys = append(keys, k)
		}
		p := &s.Points[idx(rec.TS)]
		s.Requests++
		p.Requests++
		if rec.Status >= 400 {
			s.Errors++
			p.Errors++
		}
		s.CostUSD += rec.CostUSD
		p.CostUSD += rec.CostUSD
	}
	slices.SortFunc(keys, func(a, b string) int {
		x, y := series[a], series[b]
		return cmp.Or(cmp.Compare(y.CostUSD, x.CostUSD), cmp.Compare(y.Requests, x.Requests), strings.Compare(a, b))
	})
	gt := &analytics.GroupTimeseries{From: q.From, To: q.To, Interval: interval, GroupBy: by, Series: []analytics.Series{}}
	for i, k := range keys {
		s := series[k]
		if i < limit {
			gt.Series = append(gt.Series, *s)
			continue
		}
		if gt.Other == nil {
			gt.Other = &analytics.Series{Points: make([]analytics.SeriesPoint, len(s.Points))}
			for j := range s.Points {
				gt.Other.Points[j].TS = s.Points[j].TS
			}
		}
		o := gt.Other
		o.Requests += s.Requests
		o.Errors += s.Errors
		o.CostUSD += s.CostUSD
		for j, p := range s.Points {
			o.Points[j].Requests += p.Requests
			o.Points[j].Errors += p.Errors
			o.Points[j].CostUSD += p.CostUSD
		}
	}
	return gt
}

func groupKey(rec *analytics.Record, by string) string {
	switch by {
	case "model":
		return rec.Model
	case "provider":
		return rec.Provider
	case "gateway":
		return rec.GatewayID
	case "user":
		return rec.UserID
	case "token":
		return rec.TokenID
	case "status":
		return strconv.Itoa(rec.Status)
	case "error_code":
		return rec.ErrorCode
	}
	panic("unknown group_by " + by)
}

func (r *ref) groups(q analytics.Query, by string) []analytics.Group {
	parts := map[string][]*analytics.Record{}
	for _, rec := range r.filter(q) {
		k := groupKey(rec, by)
		parts[k] = append(parts[k], rec)
	}
	out := []analytics.Group{}
	for k, recs := range parts {
		out = append(out, group(k, recs))
	}
	return out
}

// byRequests orders groups by requests descending, then key ascending.
func byRequests(a, b analytics.Group) int {
	return cmp.Or(cmp.Compare(b.Requests, a.Requests), strings.Compare(a.Key, b.Key))
}

// byCost orders groups by cost descending, then key ascending.
func byCost(a, b analytics.Group) int {
	return cmp.Or(cmp.Compare(b.CostUSD, a.CostUSD), strings.Compare(a.Key, b.Key))
}

func (r *ref) analysis(q analytics.Query, by string) *analytics.Analysis {
	gs := r.groups(q, by)
	slices.SortFunc(gs, byRequests)
	return &analytics.Analysis{From: q.From, To: q.To, GroupBy: by, Groups: gs}
}

func (r *ref) spend(q analytics.Query) *analytics.Spend {
	s := &analytics.Spend{From: q.From, To: q.To, ByModel: []analytics.ModelSpend{}, ByDay: []analytics.DaySpend{}}
	models := map[[2]string]*analytics.ModelSpend{}
	days := map[string]*analytics.DaySpend{}
	for _, rec := range r.filter(q) {
		s.TotalUSD += rec.CostUSD
		k := [2]string{rec.Provider, rec.Model}
		if models[k] == nil {
			models[k] = &analytics.ModelSpend{Provider: rec.Provider, Model: rec.Model}
		}
		models[k].Requests++
		models[k].CostUSD += rec.CostUSD
		models[k].TokensIn += rec.TokensIn
		models[k].TokensOut += rec.TokensOut
		if analytics.IsUnpriced(rec) {
			models[k].UnpricedRequests++
			s.UnpricedRequests++
		}
		d := rec.TS.UTC().Format(time.DateOnly)
		if days[d] == nil {
			days[d] = &analytics.DaySpend{Day: d}
		}
		days[d].Requests++
		days[d].CostUSD += rec.CostUSD
	}
	for _, m := range models {
		s.ByModel = append(s.ByModel, *m)
	}
	slices.SortFunc(s.ByModel, func(a, b analytics.ModelSpend) int {
		return cmp.Or(cmp.Compare(b.CostUSD, a.CostUSD), strings.Compare(a.Model, b.Model), strings.Compare(a.Provider, b.Provider))
	})
	for _, d := range days {
		s.ByDay = append(s.ByDay, *d)
	}
	slices.SortFunc(s.ByDay, func(a, b analytics.DaySpend) int { return strings.Compare(a.Day, b.Day) })
	return s
}

func top(gs []analytics.Group) []analytics.Group {
	slices.SortFunc(gs, byCost)
	if len(gs) > 10 {
		gs = gs[:10]
	}
	return gs
}

func (r *ref) tenantAnalysis(q analytics.Query) *analytics.TenantAnalysis {
	recs := r.filter(q)
	all := group("", recs)
	a := &analytics.TenantAnalysis{From: q.From, To: q.To, Requests: all.Requests, ErrorRate: ratio(all.Errors, all.Requests),
		TopGateways: top(r.groups(q, "gateway")), TopUsers: top(r.groups(q, "user")), TopModels: top(r.groups(q, "model"))}
	for _, rec := range recs {
		a.CacheSavingsUSD += rec.CacheSavedUSD
	}
	return a
}

// readBack is a record as a backend answers it: no spans or events, empty
// slices and maps rather than nil, bodies only when withBodies.
func readBack(rec *analytics.Record, withBodies bool) analytics.Record {
	out := *rec
	out.Spans, out.Events = nil, nil
	out.RuleHits = append([]string{}, rec.RuleHits...)
	out.Flags = append([]string{}, rec.Flags...)
	out.Metadata = map[string]string{}
	for k, v := range rec.Metadata {
		out.Metadata[k] = v
	}
	if !withBodies {
		out.RequestBody, out.ResponseBody = "", ""
	}
	return out
}

func newestFirst(a, b *analytics.Record) int {
	return cmp.Or(b.TS.Compare(a.TS), strings.Compare(b.ID, a.ID))
}

// sortKey is the value a log listing sorts on.
func sortKey(rec *analytics.Record, by string) int64 {
	switch by {
	case "latency":
		return rec.LatencyMS
	case "cost":
		return int64(rec.CostUSD)
	case "tokens":
		return rec.TokensIn + rec.TokensOut
	case "status":
		return int64(rec.Status)
	}
	return 0
}

// inClass reports whether rec is in a log filter's status class.
func inClass(rec *analytics.Record, class string) bool {
	switch class {
	case "":
		return true
	case "errors":
		return rec.Status >= 400 || rec.ErrorCode != ""
	}
	return strconv.Itoa(rec.Status/100)+"xx" == class
}

func inBounds(v int64, b analytics.Bounds) bool {
	return (b.Min == nil || v >= *b.Min) && (b.Max == nil || v <= *b.Max)
}

// lowerASCII folds the ASCII letters of s only.
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// found reports whether the free-text search of a log filter matches rec.
func found(rec *analytics.Record, text string) bool {
	if text == "" {
		return true
	}
	text = lowerASCII(text)
	if strings.Contains(lowerASCII(rec.ID), text) {
		return true
	}
	for _, v := range rec.Metadata {
		if strings.Contains(lowerASCII(v), text) {
			return true
		}
	}
	return false
}

func (r *ref) logs(f analytics.LogFilter) []analytics.Record {
	var recs []*analytics.Record
	for _, rec := range r.filter(f.Query) {
		if (f.Provider != "" && rec.Provider != f.Provider) || (f.Model != "" && rec.Model != f.Model) ||
			(f.Status != 0 && rec.Status != f.Status) || (f.ErrorCode != "" && rec.ErrorCode != f.ErrorCode) ||
			(f.Operation != "" && rec.Operation != f.Operation) || (f.TokenID != "" && rec.TokenID != f.TokenID) ||
			!inClass(rec, f.StatusClass) || !found(rec, f.Search) ||
			!inBounds(rec.LatencyMS, f.LatencyMS) || !inBounds(int64(rec.CostUSD), f.CostUSD) {
			continue
		}
		ok := true
		for k, v := range f.Metadata {
			if got, has := rec.Metadata[k]; !has || got != v {
				ok = false
			}
		}
		if ok {
			recs = append(recs, rec)
		}
	}
	// Sorted by the key, then (ts, id), all in one direction.
	slices.SortFunc(recs, func(a, b *analytics.Record) int {
		c := cmp.Or(cmp.Compare(sortKey(b, f.Sort.By), sortKey(a, f.Sort.By)), newestFirst(a, b))
		if f.Sort.Asc {
			return -c
		}
		return c
	})
	out := []analytics.Record{}
	for _, rec := range recs {
		out = append(out, readBack(rec, false))
	}
	return out
}

func (r *ref) log(id string) *analytics.Record {
	for _, rec := range r.recs {
		if rec.ID == id {
			out := readBack(rec, true)
			return &out
		}
	}
	return nil
}

func rootOf(rec *analytics.Record) *analytics.Span {
	for i := range rec.Spans {
		if rec.Spans[i].ParentID == "" {
			return &rec.Spans[i]
		}
	}
	return nil
}

func (r *ref) traces(q analytics.Query) []analytics.TraceSummary {
	out := []analytics.TraceSummary{}
	for _, rec := range r.recs {
		root := rootOf(rec)
		if root == nil || !matches(rec, q) || !inRange(root.Start, q) {
			continue
		}
		out = append(out, analytics.TraceSummary{ID: rec.TraceID, RequestID: rec.ID, Start: root.Start,
			DurationMS: root.DurationMS, Status: rec.Status, Model: rec.Model, Spans: len(rec.Spans)})
	}
	slices.SortFunc(out, func(a, b analytics.TraceSummary) int {
		return cmp.Or(b.Start.Compare(a.Start), strings.Compare(b.ID, a.ID))
	})
	return out
}

func (r *ref) trace(id string) *analytics.Trace {
	for _, rec := range r.recs {
		if rec.TraceID != id || rootOf(rec) == nil {
			continue
		}
		nodes := map[string]*analytics.Span{}
		for _, s := range rec.Spans {
			n := s
			n.Children = nil
			// A store gives every attribute back in the map.
			n.Attributes, n.Fixed = s.AttributeMap(), [analytics.MaxFixedAttrs]analytics.SpanAttr{}
			nodes[s.SpanID] = &n
		}
		var root *analytics.Span
		for _, s := range rec.Spans {
			n := nodes[s.SpanID]
			if s.ParentID == "" {
				root = n
				continue
			}
			p := nodes[s.ParentID]
			p.Children = append(p.Children, n)
		}
		for _, n := range nodes {
			slices.SortFunc(n.Children, func(a, b *analytics.Span) int {
				return cmp.Or(a.Start.Compare(b.Start), strings.Compare(a.SpanID, b.SpanID))
			})
		}
		return &analytics.Trace{ID: id, TenantID: rec.TenantID, GatewayID: rec.GatewayID, RequestID: rec.ID,
			Start: root.Start, DurationMS: root.DurationMS, Root: root}
	}
	return nil
}

func (r *ref) eventsOf(q analytics.Query) []eventOf {
	var out []eventOf
	for _, e := range r.events {
		if (q.TenantID == "" || e.ev.TenantID == q.TenantID) && (q.GatewayID == "" || e.ev.GatewayID == q.GatewayID) &&
			(q.UserID == "" || e.rec.UserID == q.UserID) && inRange(e.ev.TS, q) {
			out = append(out, e)
		}
	}
	return out
}

// guardrailInterval is the bucket of guardrail points: hour up to 90 days.
func guardrailInterval(q analytics.Query) string {
	if q.To.Sub(q.From) > 90*24*time.Hour {
		return "day"
	}
	return "hour"
}

func (r *ref) guardrailStats(q analytics.Query) *analytics.GuardrailStats {
	evs := r.eventsOf(q)
	pts, idx := buckets(q, guardrailInterval(q))
	type key struct{ rule, action string }
	hits := map[key]*analytics.RuleHits{}
	newest := map[key]analytics.GuardrailEvent{}
	for _, e := range evs {
		k := key{e.ev.RuleID, e.ev.Action}
		if hits[k] == nil {
			hits[k] = &analytics.RuleHits{RuleID: e.ev.RuleID, Action: e.ev.Action}
		}
		hits[k].Hits++
		if n, ok := newest[k]; !ok || e.ev.TS.After(n.TS) || (e.ev.TS.Equal(n.TS) && e.ev.ID > n.ID) {
			newest[k] = e.ev
		}
		pts[idx(e.ev.TS)].Requests++
	}
	s := &analytics.GuardrailStats{From: q.From, To: q.To, Total: int64(len(evs)), ByRule: []analytics.RuleHits{}, Points: pts}
	for k, h := range hits {
		h.RuleName = newest[k].RuleName
		s.ByRule = append(s.ByRule, *h)
	}
	slices.SortFunc(s.ByRule, func(a, b analytics.RuleHits) int {
		return cmp.Or(cmp.Compare(b.Hits, a.Hits), strings.Compare(a.RuleID, b.RuleID), strings.Compare(a.Action, b.Action))
	})
	return s
}

func (r *ref) guardrailEvents(q analytics.Query) []analytics.GuardrailEvent {
	out := []analytics.GuardrailEvent{}
	for _, e := range r.eventsOf(q) {
		out = append(out, e.ev)
	}
	slices.SortFunc(out, func(a, b analytics.GuardrailEvent) int {
		return cmp.Or(b.TS.Compare(a.TS), strings.Compare(b.ID, a.ID))
	})
	return out
}

func (r *ref) spendSince(scope string, start time.Time) int64 {
	kind, id, _ := strings.Cut(scope, ":")
	var sum money.USD
	for _, rec := range r.recs {
		if rec.TS.Before(start) {
			continue
		}
		of := map[string]string{"tenant": rec.TenantID, "gateway": rec.GatewayID, "user": rec.UserID, "token": rec.TokenID}
		if v, ok := of[kind]; ok && v == id {
			sum += rec.CostUSD
		}
	}
	return int64(sum)
}

// summary describes the data set, to show in a failure what was compared.
func (r *ref) summary() string {
	return fmt.Sprintf("%d records, %d events", len(r.recs), len(r.events))
}
