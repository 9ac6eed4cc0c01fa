package proxy

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/internal/rules"
)

// FuzzNativeRules: the response rules read the events a provider streams
// on a native door. Whatever the events, the filter does not panic, and
// every event it sends whose data came as JSON goes out as JSON.
func FuzzNativeRules(f *testing.F) {
	f.Add("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a peregrine fal\"}}\n\n"+
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"con dives\"}}\n\n"+
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n", true)
	f.Add("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":\\\"peregrine\"}}\n\n"+
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", true)
	f.Add("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"content_index\":0,\"delta\":\"peregrine falcon\"}\n\n"+
		"event: response.function_call_arguments.delta\ndata: {\"type\":\"response.function_call_arguments.delta\",\"output_index\":1,\"delta\":\"{\\\"x\\\":1\"}\n\n"+
		"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"output\":[{\"type\":\"function_call\",\"arguments\":\"{\\\"x\\\":\\\"peregrine falcon\\\"}\"}]}}\n\n", false)
	f.Add("data: [DONE]\n\ndata: {\n\n", false)
	set, err := rules.Compile([]rules.Rule{
		{ID: "r1", Name: "falcon", Direction: rules.Response, Kind: "keyword", Patterns: []string{"peregrine falcon"}, Action: rules.Redact},
		{ID: "r2", Name: "bluebird", Direction: rules.Response, Kind: "keyword", Patterns: []string{"bluebird"}, Action: rules.Block},
	})
	if err != nil {
		f.Fatal(err)
	}
	h := &Inference{cfg: InferenceConfig{Now: time.Now, RuleBudget: -1}}
	f.Fuzz(func(t *testing.T, stream string, anthropic bool) {
		c := &call{rec: &analytics.Record{}}
		c.in.wire = llm.WireOpenAIResponses
		if anthropic {
			c.in.wire = llm.WireAnthropicMessages
		}
		nr := h.newNativeRules(c, set)
		check := func(outs [][]byte) {
			for _, ev := range outs {
				if _, data := splitEvent(ev); len(bytes.TrimSpace(data)) > 0 && !json.Valid(bytes.TrimSpace(data)) {
					t.Fatalf("sent an event that is not JSON: %q", ev)
				}
			}
		}
		for _, ev := range bytes.SplitAfter([]byte(stream), []byte("\n\n")) {
			_, data := splitEvent(ev)
			if !json.Valid(bytes.TrimSpace(data)) {
				continue // the filter refuses it; such an event is not sent
			}
			outs, blocked := nr.Push(ev)
			if blocked != nil {
				return
			}
			check(outs)
		}
		check(nr.Flush())
	})
}
