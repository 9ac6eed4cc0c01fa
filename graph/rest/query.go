package rest

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/page"
)

// query parses the query string strictly: url.Values drops malformed pairs
// silently, which would turn a typo into a default.
func query(r *http.Request) (url.Values, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, apierr.New(http.StatusBadRequest, apierr.CodeInvalidRequest, "the query string is malformed")
	}
	return q, nil
}

// single returns the one value of parameter name, and whether it was given.
func single(q url.Values, name string) (string, bool, error) {
	vs := q[name]
	switch len(vs) {
	case 0:
		return "", false, nil
	case 1:
		return vs[0], true, nil
	}
	return "", false, apierr.Invalid(name, "%s is given more than once", name)
}

// PageParams returns the ?limit= (default page.DefaultLimit; given, it must
// be page.Valid, so an explicit 0 is refused) and
// the opaque ?cursor= ("" for the first page) of a list request. Bad values
// are 400 invalid_request naming the parameter.
func PageParams(r *http.Request) (limit int, cursor string, err error) {
	q, err := query(r)
	if err != nil {
		return 0, "", err
	}
	limit = page.DefaultLimit
	s, ok, err := single(q, "limit")
	if err != nil {
		return 0, "", err
	}
	if ok {
		n, err := strconv.Atoi(s)
		if err != nil || !page.Valid(n) {
			return 0, "", apierr.Invalid("limit", "limit must be an integer from 1 to %d", page.MaxLimit)
		}
		limit = n
	}
	cursor, _, err = single(q, "cursor")
	if err != nil {
		return 0, "", err
	}
	if !page.CursorOK(cursor) {
		return 0, "", apierr.Invalid("cursor", "cursor is not a cursor this server returned")
	}
	return limit, cursor, nil
}

// TimeRange returns the ?from= and ?to= of a query, RFC 3339 times, in UTC.
// The defaults are page.Range's: to is now and from page.DefaultRange
// before to; from must be before to. Bad values are 400 invalid_request
// naming the parameter.
func TimeRange(r *http.Request, now time.Time) (from, to time.Time, err error) {
	q, err := query(r)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	to, _, err = timeParam(q, "to")
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	from, _, err = timeParam(q, "from")
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	from, to, ok := page.Range(from, to, now)
	if !ok {
		return time.Time{}, time.Time{}, apierr.Invalid("from", "from must be before to")
	}
	return from, to, nil
}

func timeParam(q url.Values, name string) (time.Time, bool, error) {
	s, ok, err := single(q, name)
	if err != nil || !ok {
		return time.Time{}, false, err
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, false, apierr.Invalid(name, "%s must be an RFC 3339 time, such as 2025-01-02T15:04:05Z", name)
	}
	return t, true, nil
}
