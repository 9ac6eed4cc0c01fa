package proxy

import (
	"bytes"

	"github.com/sluicehq/sluice/internal/llm"
)

// route is a parsed inference path: /v1/{tenant}/{gateway}/{provider|compat}/{op}
// (op is one to three segments: chat/completions, v1/messages/count_tokens).
// The slices alias the request's path and are valid while the handler runs.
type route struct {
	tenant, gateway, provider []byte // provider is nil for /compat
	op                        llm.Operation
	// kind is the API the path speaks beyond its operation: the OpenAI
	// shape (the zero value) or the Anthropic Messages door.
	kind routeKind
	// models is set for GET /v1/{tenant}/{gateway}/{provider|compat}/models
	// (model discovery, proxy/models.go); op is 0 then.
	models bool
}

// routeKind is the front door of a path (doorFor).
type routeKind uint8

// The route kinds.
const (
	kindOpenAI routeKind = iota
	// kindMessages is /compat/v1/messages (op chat).
	kindMessages
	// kindCountTokens is /compat/v1/messages/count_tokens: counted by
	// Anthropic for an Anthropic target (countUpstream), else by the
	// gateway's tokenizer.
	kindCountTokens
	// kindResponses is /compat/responses (op chat): the translated OpenAI
	// Responses door (proxy/door_responses.go).
	kindResponses
)

var compatSeg = []byte("compat")

// parsePath parses a raw (not normalised) request path. It accepts only
// canonical paths: lower-case slug segments, no empty, "." or ".."
// segments and no percent-escapes, so the route that is authorised is the
// route that is dispatched. ok is false for anything else.
func parsePath(p []byte) (r route, ok bool) {
	rest, found := bytes.CutPrefix(p, []byte("/v1/"))
	if !found {
		return r, false
	}
	var segs [6][]byte
	n := 0
	for len(rest) > 0 && n < len(segs) {
		i := bytes.IndexByte(rest, '/')
		if i < 0 {
			segs[n], rest = rest, nil
		} else {
			segs[n], rest = rest[:i], rest[i+1:]
			if len(rest) == 0 { // trailing slash
				return r, false
			}
		}
		n++
	}
	if len(rest) > 0 || n < 4 {
		return r, false
	}
	for i, s := range segs[:n] {
		if !isSlug(s) && !(i == 5 && string(s) == "count_tokens") {
			return r, false
		}
	}
	r.tenant, r.gateway = segs[0], segs[1]
	compat := bytes.Equal(segs[2], compatSeg)
	if !compat {
		r.provider = segs[2]
	}
	switch {
	case n == 5 && string(segs[3]) == "chat" && string(segs[4]) == "completions":
		r.op = llm.OpChat
	case n == 4 && string(segs[3]) == "embeddings":
		r.op = llm.OpEmbeddings
	case n == 4 && string(segs[3]) == "completions" && compat:
		// The seed has legacy completions on /compat only.
		r.op = llm.OpCompletions
	case n == 5 && compat && string(segs[3]) == "v1" && string(segs[4]) == "messages":
		r.op, r.kind = llm.OpChat, kindMessages
	case n == 6 && compat && string(segs[3]) == "v1" && string(segs[4]) == "messages" && string(segs[5]) == "count_tokens":
		r.op, r.kind = llm.OpChat, kindCountTokens
	case n == 4 && compat && string(segs[3]) == "responses":
		r.op, r.kind = llm.OpChat, kindResponses
	case n == 4 && string(segs[3]) == "models":
		r.models = true
	case n == 4 && string(segs[3]) == "responses" && string(r.provider) == "openai":
		// The native Responses door (CONTRACT §12): OpenAI's own path.
		r.op = llm.OpResponses
	case n >= 5 && string(segs[3]) == "v1" && string(segs[4]) == "messages" && string(r.provider) == "anthropic":
		// The native Messages door (CONTRACT §12), with its token count.
		r.op = llm.OpMessages
		if n == 6 {
			if string(segs[5]) != "count_tokens" {
				return r, false
			}
			r.op = llm.OpCountTokens
		}
	default:
		return r, false
	}
	return r, true
}

// isSlug reports whether s is 1–63 bytes of a-z, 0-9 and '-' not starting
// with '-' (tenant and gateway slugs, provider ids, path words).
func isSlug(s []byte) bool {
	if len(s) == 0 || len(s) > 63 || s[0] == '-' {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
