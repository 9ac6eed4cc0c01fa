// Package rest is the transport machinery of the /admin/v1/... REST shims:
// a router on http.ServeMux's method-and-pattern matching over canonical paths
// (with 404 and 405 in the JSON error shape), strict JSON decoding, the list and error
// response shapes, pagination and time-range query parameters, and the
// authentication middleware.
//
// Handlers return errors; WriteError is the one place an error becomes a
// response, through apierr.From. An error that carries no *apierr.Error is
// answered with a generic 500 and logged with the request id; its text never
// reaches the client.
//
// The resource handlers themselves live elsewhere and register here with
// Router.Handle. They stay thin: principal → input → domain → respond; the
// domain function authorizes the call, once.
package rest
