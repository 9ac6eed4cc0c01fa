package apierr

// Error codes: the "code" field of the wire shape (CONTRACT §3 and the
// extensions it records). Compare and construct with these names, never
// with string literals, so that a code is spelled once.
const (
	// 400
	CodeInvalidJSON           = "invalid_json"
	CodeInvalidRequest        = "invalid_request"
	CodeInvalidPath           = "invalid_path"
	CodeContentBlocked        = "content_blocked"
	CodeUnknownModel          = "unknown_model"
	CodeModelNotAllowed       = "model_not_allowed"
	CodeProviderNotConfigured = "provider_not_configured"
	CodeProviderNotSupported  = "provider_not_supported"
	CodeProviderNotAllowed    = "provider_not_allowed"
	CodeUnsupportedFeature    = "unsupported_feature"
	CodeRoleCannotHoldTokens  = "role_cannot_hold_tokens"
	CodeTokenLimitReached     = "token_limit_reached"
	// 401
	CodeMissingToken       = "missing_token"
	CodeInvalidToken       = "invalid_token"
	CodeTokenExpired       = "token_expired"
	CodeInvalidCredentials = "invalid_credentials"
	// 403
	CodeForbidden               = "forbidden"
	CodeRoleCannotCallInference = "role_cannot_call_inference"
	CodeGatewayNotAssigned      = "gateway_not_assigned"
	CodeTenantSuspended         = "tenant_suspended"
	// 404, 405, 409, 410
	CodeNotFound         = "not_found"
	CodeMethodNotAllowed = "method_not_allowed"
	CodeConflict         = "conflict"
	CodeModelSunset      = "model_sunset"
	// 408, 413, 415, 431
	CodeRequestTimeout       = "request_timeout"
	CodeBodyTooLarge         = "body_too_large"
	CodeUnsupportedMediaType = "unsupported_media_type"
	CodeHeadersTooLarge      = "headers_too_large"
	// 429
	CodeRateLimitExceeded        = "rate_limit_exceeded"
	CodeBudgetExceeded           = "budget_exceeded"
	CodeConcurrencyLimitExceeded = "concurrency_limit_exceeded"
	// 499 (logged only: the client went away)
	CodeClientClosed       = "client_closed"
	CodeClientWriteTimeout = "client_write_timeout"
	// 5xx
	CodeInternal        = "internal_error"
	CodeNotImplemented  = "not_implemented"
	CodeUpstreamError   = "upstream_error"
	CodeCircuitOpen     = "circuit_open"
	CodeUnavailable     = "unavailable"
	CodeShuttingDown    = "shutting_down"
	CodeUpstreamTimeout = "upstream_timeout"
	// CodeCacheError ends a stream replayed from the response cache whose
	// stored answer could not be replayed (an SSE error event only).
	CodeCacheError = "cache_error"
)
