package providertest

import "strings"

// Prompt caching and stop sequences, as the Anthropic and Bedrock formats
// mock them.
//
// A request's cache breakpoint (Anthropic cache_control, Converse
// cachePoint) closes a prefix of the prompt: the words of the texts up to
// it, tools first, then the system, then the messages. The first request
// with a prefix writes it to the mock's prompt cache, and its words are
// cache-write tokens (Anthropic cache_creation_input_tokens, Bedrock
// cacheWriteInputTokens); a later request with the same prefix reads them
// (cache_read_input_tokens, cacheReadInputTokens). The last breakpoint of
// a request counts; tokens before it are not also input tokens.

// prefix collects the texts of a prompt in order and remembers the last
// breakpoint.
type prefix struct {
	texts strings.Builder
	at    int // the length of texts at the last breakpoint, -1 for none
}

func newPrefix() *prefix { return &prefix{at: -1} }

// add adds a text of the prompt; cached says a breakpoint follows it.
func (p *prefix) add(text string, cached bool) {
	p.texts.WriteString(text)
	p.texts.WriteByte('\n')
	if cached {
		p.at = p.texts.Len()
	}
}

// promptCache reports the tokens a request with prompt p reads from and
// writes to the mock's prompt cache, and remembers its prefix.
func (s *Server) promptCache(p *prefix) (read, write int) {
	if p.at < 0 {
		return 0, 0
	}
	key := p.texts.String()[:p.at]
	n := words(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cached[key] {
		return n, 0
	}
	if s.cached == nil {
		s.cached = map[string]bool{}
	}
	s.cached[key] = true
	return 0, n
}

// stopAt cuts text before the first of stops it holds, as a provider
// stops at a stop sequence: the text before it and the sequence, or text
// and "" when it holds none.
func stopAt(text string, stops []string) (string, string) {
	cut, seq := len(text), ""
	for _, s := range stops {
		if i := strings.Index(text, s); s != "" && i >= 0 && i < cut {
			cut, seq = i, s
		}
	}
	return text[:cut], seq
}
