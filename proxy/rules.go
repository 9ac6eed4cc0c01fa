package proxy

import "github.com/sluicehq/sluice/apierr"

// requestRules applies the gateway's content rules to the request body:
// block answers 400 content_blocked (the provider is never called),
// redact rewrites c.body, flag records a guardrail event.
func (h *Inference) requestRules(c *call) *apierr.Error { return nil }

// responseRules applies the rules to a complete response body; it returns
// the body to send (redacted) or a block error.
func (h *Inference) responseRules(c *call, body []byte) ([]byte, *apierr.Error) { return body, nil }

// streamFilter applies the response rules to a stream, chunk by chunk.
// Push returns the bytes to send now (possibly held back for redaction
// across chunk boundaries); Flush returns what is held at the end.
type streamFilter interface {
	Push(chunk []byte) (out [][]byte, blocked *apierr.Error)
	Flush() [][]byte
}

// newStreamFilter returns the stream filter of the call, or nil when no
// response rule applies.
func (h *Inference) newStreamFilter(c *call) streamFilter { return nil }
