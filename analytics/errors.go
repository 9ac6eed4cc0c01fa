package analytics

// QueryError is a query a backend refuses because of what the caller
// asked for: a cursor the backend did not issue, an unknown interval or
// group_by, a range with too many buckets. Backends return it (storage
// decides no HTTP status); the admin domain's one classifier,
// admin.ClassifyError, answers it as a 400 invalid_request naming Param
// with Reason as the message, on REST and GraphQL alike.
type QueryError struct {
	// Param is the query parameter at fault, as the admin API names it:
	// "cursor", "interval" or "group_by".
	Param string
	// Reason says what is wrong, in a sentence fit for the client.
	Reason string
}

// Error returns the reason.
func (e *QueryError) Error() string { return e.Reason }

// InvalidCursor is the error of a listing cursor the backend did not issue
// (or cannot read).
func InvalidCursor() *QueryError {
	return &QueryError{Param: "cursor", Reason: "cursor is not valid"}
}
