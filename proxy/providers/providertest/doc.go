// Package providertest is Sluice's own mock of upstream model providers, for
// tests and `sluice bench`. It speaks each provider's real wire format, so an
// adapter under test cannot tell it from the provider; today that is the
// OpenAI format, one file per wire format (openai.go), chosen by path.
//
// # Paths
//
// The OpenAI format is served with and without the /v1 prefix, because base
// URLs are configured both ways:
//
//	POST /v1/chat/completions   POST /chat/completions
//	POST /v1/completions        POST /completions
//	POST /v1/embeddings         POST /embeddings
//
// Two paths are for clients in another process, which cannot call the Go API:
//
//	GET  /_mock/stats   {"requests":N}, the same N as Count
//	POST /_mock/reset   the same as Reset
//
// # Default behaviour
//
// Answers are deterministic so that tests can assert them. A request needs
// "Authorization: Bearer <any key>" (else 401) and a JSON body (else 400);
// errors have OpenAI's shape {"error":{"message","type","param","code"}}.
//
// A chat completion answers "Hello from mock: " followed by the text of the
// last user message, cut to 100 characters. Its usage counts words split by
// white space: prompt_tokens is the number of words across all messages (at
// least 1), completion_tokens the number of words of the answer. A legacy
// completion answers the same way from its (last) prompt. With "stream":true
// the answer comes as server-sent events: for chat a first chunk with the
// role, then the answer in Chunks pieces (3 unless set), a chunk with
// finish_reason "stop", a usage chunk with "choices":[] only when the request
// sets stream_options.include_usage, and "data: [DONE]". Every event is
// flushed as it is written.
//
// A chat request with tools whose tool_choice forces a call ("required" or a
// named function) is answered, unless its last message is a tool result,
// with one call of that tool (the first for "required") whose arguments are
// {"text":<the echoed text>}, finish_reason "tool_calls"; streamed, a chunk
// with the call's id and name, then the arguments in Chunks pieces. The
// Anthropic, Bedrock, Cohere and Gemini formats call tools too, each under
// its own rule (see their files).
//
// A chat request with response_format json_object or json_schema is
// answered with JSON: {"text":"Hello from mock: <echoed text>"} (the Gemini
// format does the same for responseMimeType application/json, the Cohere
// format for response_format json_object).
//
// An embedding is 8 numbers derived from a hash of the input text, scaled to
// length 1, so equal inputs get equal vectors; "encoding_format":"base64" is
// honoured (little-endian float32), as OpenAI's SDKs ask for it by default.
//
// A Step's AnswerTokens makes the answer that long ("word" repeated) and
// makes every wire format honour its request's maximum output the way a
// provider does: the answer stops at the cap with the format's "length"
// finish reason. Its PromptTokens replaces the prompt count of the usage.
//
// # Fault injection
//
// Server.Script queues Steps; each request to a provider path takes the next
// one (first in, first out, each Step Times times), and the default
// behaviour applies when the queue is empty. A Step with an error Status or
// a Body answers that before the key and the body are checked, the way a
// failing load balancer in front of a provider would.
//
// Clients that cannot call Script (the npm end-to-end test, benchmarks run
// against `sluice mock-provider`) put directives in the model name instead,
// each "@name=value" after the model id:
//
//	@chunks=N      stream the answer in N content chunks (N ≥ 1)
//	@delay=D       wait D between streamed chunks (a Go duration: 20ms, 1s)
//	@latency=D     wait D before the status line
//	@status=S      answer HTTP status S (an error body in OpenAI's shape when S ≥ 400)
//	@reset=N       close the connection after N content chunks, without [DONE]
//	@cache_read=N  report N more prompt tokens, read from the prompt cache
//	@cache_write=N report N more prompt tokens, written to the prompt cache
//	@cache_write_1h=N  of those, N written for one hour
//	@reasoning=N   report N more output tokens, spent reasoning
//
// (Step.Detail, UsageDetail: each wire format reports them in its own
// provider's fields.)
//
// For example "gpt-4o-mini@chunks=5@delay=50ms". A directive overrides the
// same setting of a scripted Step. Responses name the model without its
// directives ("gpt-4o-mini"); an unknown or malformed directive is a 400.
package providertest
