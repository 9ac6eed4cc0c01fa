package analytics

import (
	"slices"
	"time"

	"github.com/sluicehq/sluice/internal/money"
)

// The group_by values of Backend.GroupTimeseries beyond Analysis's:
// GroupErrorReason groups the errors (status >= 400) only, each refusal
// (IsRefusal) by its error code and every other error as ReasonUpstream.
const (
	GroupErrorReason = "error_reason"
	ReasonUpstream   = "upstream"
)

// Series limits of GroupTimeseries: how many groups get their own series
// (the rest are summed into Other).
const (
	DefaultSeries = 5
	MaxSeries     = 20
)

// SeriesPoint is one bucket of one group's series.
type SeriesPoint struct {
	TS       time.Time `json:"ts"`
	Requests int64     `json:"requests"`
	Errors   int64     `json:"errors"`
	CostUSD  money.USD `json:"cost_usd"`
}

// Series is one group's usage over time, with its totals over the range.
type Series struct {
	Key      string        `json:"key"`
	Requests int64         `json:"requests"`
	Errors   int64         `json:"errors"`
	CostUSD  money.USD     `json:"cost_usd"`
	Points   []SeriesPoint `json:"points"`
}

// GroupTimeseries is the usage of a range per group and bucket: the top
// groups (by cost descending, then requests descending, then key
// ascending) each with its series, and the rest summed as Other (nil when
// every group has its own series).
type GroupTimeseries struct {
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	Interval string    `json:"interval"`
	GroupBy  string    `json:"group_by"`
	Series   []Series  `json:"series"`
	Other    *Series   `json:"other"`
}

// seriesGroupBys are the group_by values of GroupTimeseries.
var seriesGroupBys = []string{"model", "provider", "gateway", "user", "token", "status", "error_code", GroupErrorReason}

// intervalSteps are the time-series bucket sizes.
var intervalSteps = map[string]time.Duration{"minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour}

// CheckGroupSeries validates the arguments of GroupTimeseries and returns
// the bucket size of interval.
func CheckGroupSeries(groupBy, interval string, limit int) (time.Duration, error) {
	if !slices.Contains(seriesGroupBys, groupBy) {
		return 0, &QueryError{Param: "group_by", Reason: "group_by must be model, provider, gateway, user, token, status, error_code or error_reason"}
	}
	step, ok := intervalSteps[interval]
	if !ok {
		return 0, &QueryError{Param: "interval", Reason: "interval must be minute, hour or day"}
	}
	if limit < 1 || limit > MaxSeries {
		return 0, &QueryError{Param: "limit", Reason: "limit must be between 1 and 20"}
	}
	return step, nil
}

// SeriesRow is what a backend reads for GroupTimeseries: the sums of one
// bucket (the unix second it starts at) and one group, Top telling a top
// group (Key) from the rest (Key "").
type SeriesRow struct {
	Bucket   int64
	Top      bool
	Key      string
	Requests int64
	Errors   int64
	CostUSD  money.USD
}

// BuildGroupTimeseries assembles the answer of GroupTimeseries from the top
// keys (in their order) and the rows: each series lists every bucket of
// size step from the one holding q.From up to q.To, empty ones with zeros.
func BuildGroupTimeseries(q Query, groupBy, interval string, step time.Duration, keys []string, rows []SeriesRow) *GroupTimeseries {
	sec := int64(step / time.Second)
	first := q.From.Unix() - ((q.From.Unix()%sec)+sec)%sec
	var starts []int64
	for b := first; b < q.To.Unix() || (b == q.To.Unix() && q.To.Nanosecond() > 0); b += sec {
		starts = append(starts, b)
	}
	empty := func(key string) *Series {
		s := &Series{Key: key, Points: make([]SeriesPoint, len(starts))}
		for i, b := range starts {
			s.Points[i].TS = time.Unix(b, 0).UTC()
		}
		return s
	}
	byKey := make(map[string]*Series, len(keys))
	for _, k := range keys {
		byKey[k] = empty(k)
	}
	var other *Series
	for _, r := range rows {
		s := byKey[r.Key]
		if !r.Top {
			if other == nil {
				other = empty("")
			}
			s = other
		}
		if s == nil {
			continue
		}
		s.Requests += r.Requests
		s.Errors += r.Errors
		s.CostUSD += r.CostUSD
		if i := (r.Bucket - first) / sec; r.Bucket >= first && i < int64(len(starts)) {
			p := &s.Points[i]
			p.Requests += r.Requests
			p.Errors += r.Errors
			p.CostUSD += r.CostUSD
		}
	}
	gt := &GroupTimeseries{From: q.From, To: q.To, Interval: interval, GroupBy: groupBy, Series: make([]Series, 0, len(keys)), Other: other}
	for _, k := range keys {
		gt.Series = append(gt.Series, *byKey[k])
	}
	return gt
}
