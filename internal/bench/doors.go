package bench

import (
	"context"
	"fmt"
)

// The front doors measured besides the chat door (issue 14): the same
// request in the Anthropic Messages shape, translated to the mock's OpenAI
// wire; in the OpenAI Responses shape, passed to the mock's /v1/responses
// (the native door); and in the Responses shape again on /compat,
// translated to the mock's OpenAI chat wire.
const (
	doorMessages        = "messages"
	doorResponses       = "responses"
	doorCompatResponses = "compat-responses"
)

// Door is one front door's figures: a closed loop (CPU per request) and,
// at the fixed rate, the plain latency and the time to the first streamed
// content event, each compared with the direct call and the chat door of
// the same run.
type Door struct {
	Name string `json:"name"`
	Path string `json:"path"`
	// Throughput is the closed loop on --concurrency connections over
	// half of --duration.
	Throughput      ClosedLoop `json:"throughput"`
	GatewayCPUS     float64    `json:"gateway_cpu_seconds"`
	CPUPerRequestMS float64    `json:"gateway_cpu_per_request_ms"`
	// Latency and Streaming are fixed-rate runs over a quarter of
	// --duration each.
	Latency   Latencies `json:"latency"`
	Streaming Latencies `json:"streaming_first_event"`
	// AddedP50MS is Latency's p50 minus the direct call's (Report.Latency);
	// OverChatP50MS minus the chat door's.
	AddedP50MS    float64 `json:"added_p50_ms"`
	OverChatP50MS float64 `json:"over_chat_p50_ms"`
	// StreamAddedP50MS is the first streamed event's p50 minus the direct
	// call's first chunk (Report.Streaming); StreamOverChatP50MS minus the
	// chat door's.
	StreamAddedP50MS    float64 `json:"stream_added_p50_ms"`
	StreamOverChatP50MS float64 `json:"stream_over_chat_p50_ms"`
	// CPUOverChatMS is CPUPerRequestMS minus the chat door's closed-loop
	// figure.
	CPUOverChatMS float64 `json:"cpu_over_chat_ms"`
}

// doorTarget is a door's plain and streamed request.
type doorTarget struct {
	name, path string
	targets
}

// doorTargets are the Messages, native Responses and compat Responses
// doors of the gateway at base.
// A streamed answer's first content event is the first "text" (Messages'
// text_delta) or "delta" (Responses' output_text.delta) with a non-empty
// value; the stream must end with the door's final event.
func doorTargets(base, token string) []doorTarget {
	auth := "Bearer " + token
	prefix := base + "/v1/" + tenantID + "/" + gatewaySlug
	messages := prefix + "/compat/v1/messages"
	responses := prefix + "/openai/responses"
	compatResponses := prefix + "/compat/responses"
	msgKey, msgDone := []byte(`"text":`), []byte("event: message_stop")
	respKey, respDone := []byte(`"delta":`), []byte("event: response.completed")
	return []doorTarget{
		{name: doorMessages, path: "/compat/v1/messages", targets: targets{
			plain: target{url: messages, auth: auth, body: messagesBody("openai/"+model, false)},
			stream: target{url: messages, auth: auth, body: messagesBody("openai/"+model+streamDirective, true), stream: true,
				contentKey: msgKey, done: msgDone},
		}},
		{name: doorResponses, path: "/openai/responses", targets: targets{
			plain: target{url: responses, auth: auth, body: responsesBody(model, false)},
			stream: target{url: responses, auth: auth, body: responsesBody(model+streamDirective, true), stream: true,
				contentKey: respKey, done: respDone},
		}},
		{name: doorCompatResponses, path: "/compat/responses", targets: targets{
			plain: target{url: compatResponses, auth: auth, body: responsesBody("openai/"+model, false)},
			stream: target{url: compatResponses, auth: auth, body: responsesBody("openai/"+model+streamDirective, true), stream: true,
				contentKey: respKey, done: respDone},
		}},
	}
}

// messagesBody is chatBody's request in the Anthropic Messages shape.
func messagesBody(model string, stream bool) []byte {
	return fmt.Appendf(nil, `{"model":%q,"max_tokens":256,"system":"You are a terse assistant.",`+
		`"messages":[{"role":"user","content":"Say hello to the benchmark in five words."}],"stream":%t}`, model, stream)
}

// responsesBody is chatBody's request in the OpenAI Responses shape.
func responsesBody(model string, stream bool) []byte {
	return fmt.Appendf(nil, `{"model":%q,"instructions":"You are a terse assistant.",`+
		`"input":"Say hello to the benchmark in five words.","stream":%t}`, model, stream)
}

// measureDoor measures one door in one phase of about --duration: a
// closed loop over half of it, then the plain and the streamed request at
// the fixed rate over a quarter each (each part after its own warm-up).
// r must hold the chat door's figures already.
func (m *measurer) measureDoor(ctx context.Context, d doorTarget, r *Report) (Door, error) {
	c := m.cfg
	out := Door{Name: d.name, Path: d.path}
	cpu := m.gw.cpuMeter()
	var err error
	out.Throughput, err = closedLoop(ctx, d.plain, c.Concurrency, c.Warmup, c.Duration/2, cpu)
	if err == nil {
		err = cpu.drain(ctx)
	}
	if err != nil {
		return out, fmt.Errorf("%s door, closed loop: %w", d.name, err)
	}
	out.GatewayCPUS = cpu.seconds()
	out.CPUPerRequestMS = perRequestMS(out.GatewayCPUS, out.Throughput.Requests)
	o := m.openOptions(nil)
	o.duration = c.Duration / 4
	if out.Latency, err = openLoop(ctx, d.plain, o); err != nil {
		return out, fmt.Errorf("%s door, fixed rate: %w", d.name, err)
	}
	if out.Streaming, err = openLoop(ctx, d.stream, o); err != nil {
		return out, fmt.Errorf("%s door, streamed at a fixed rate: %w", d.name, err)
	}
	out.AddedP50MS = out.Latency.P50MS - r.Latency.Direct.P50MS
	out.OverChatP50MS = out.Latency.P50MS - r.Latency.Gateway.P50MS
	out.StreamAddedP50MS = out.Streaming.P50MS - r.Streaming.Direct.P50MS
	out.StreamOverChatP50MS = out.Streaming.P50MS - r.Streaming.Gateway.P50MS
	out.CPUOverChatMS = out.CPUPerRequestMS - r.Throughput.CPUPerRequestMS
	return out, nil
}
