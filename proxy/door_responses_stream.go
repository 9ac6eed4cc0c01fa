package proxy

import (
	"strconv"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/jsonstr"
	"github.com/sluicehq/sluice/internal/llm"
	"github.com/sluicehq/sluice/proxy/providers"
)

// The Responses stream (CONTRACT §12): response.created and
// response.in_progress before the first output; a message item is
// opened by the first text delta (response.output_item.added,
// response.content_part.added) and carries response.output_text.delta
// events; a function call item is opened by a tool call's first chunk and
// carries response.function_call_arguments.delta events; the model's
// reasoning is a reasoning item whose summary part carries
// response.reasoning_summary_text.delta events, closed by the thinking
// block's signature (its encrypted_content) or by the next item. An item is
// closed (…done events, response.output_item.done) when another begins
// and at the end, which is response.completed (or response.incomplete)
// with the whole response and its usage. Every event's data has its type
// and sequence_number; a failure after the first byte ends the stream
// with an error event.

// appendChunk translates one OpenAI chat chunk into Responses events.
func (d *responsesDoor) appendChunk(dst, chunk []byte) []byte {
	p := providers.BodyParsers.Get()
	defer providers.BodyParsers.Put(p)
	v, err := p.ParseBytes(chunk)
	if err != nil {
		return dst
	}
	d.setAnswer(v)
	if !d.started {
		dst = d.appendStart(dst)
	}
	ch := v.Get("choices", "0")
	if ch == nil {
		return dst
	}
	delta := ch.Get("delta")
	if t := delta.GetStringBytes("reasoning_content"); len(t) > 0 {
		dst = d.appendText(dst, itemReasoning, t, nil)
	}
	for _, tb := range delta.GetArray("thinking_blocks") {
		dst = d.appendThinkingBlock(dst, tb)
	}
	if t := delta.GetStringBytes("content"); len(t) > 0 {
		dst = d.appendText(dst, itemMessage, t, appendLogprobs(nil, ch))
	}
	for _, tc := range delta.GetArray("tool_calls") {
		i := tc.GetInt64("index")
		if id := tc.GetStringBytes("id"); len(id) > 0 || d.open < 0 || d.items[d.open].kind != itemCall || d.tool != i {
			d.tool = i
			dst = d.openItem(dst, responsesItem{kind: itemCall, id: append([]byte("fc_"), id...), callID: append([]byte(nil), id...),
				name: append([]byte(nil), tc.GetStringBytes("function", "name")...)})
		}
		if args := tc.GetStringBytes("function", "arguments"); len(args) > 0 {
			it := &d.items[d.open]
			it.tx = append(it.tx, args...)
			dst = d.event(dst, "response.function_call_arguments.delta")
			dst = d.appendItemRef(dst, it)
			dst = append(dst, `,"delta":`...)
			dst = jsonstr.Append(dst, args)
			dst = append(dst, "}\n\n"...)
		}
	}
	if fr := ch.GetStringBytes("finish_reason"); len(fr) > 0 {
		d.finish = string(fr)
	}
	return dst
}

// appendText appends a text delta to the open item of kind (a message or
// reasoning), opening one when another kind is open, and its content
// part (summary part) with its first text. lp are the delta's logprobs,
// comma-joined.
func (d *responsesDoor) appendText(dst []byte, kind byte, t, lp []byte) []byte {
	if d.open < 0 || d.items[d.open].kind != kind {
		dst = d.openItem(dst, responsesItem{kind: kind, id: d.newItemID(kind)})
	}
	it := &d.items[d.open]
	if !it.part {
		it.part = true
		if kind == itemReasoning {
			dst = d.event(dst, "response.reasoning_summary_part.added")
		} else {
			dst = d.event(dst, "response.content_part.added")
		}
		dst = d.appendItemRef(dst, it)
		dst = append(dst, `,"part":`...)
		dst = it.appendPart(dst, nil)
		dst = append(dst, "}\n\n"...)
	}
	it.tx = append(it.tx, t...)
	if kind == itemReasoning {
		dst = d.event(dst, "response.reasoning_summary_text.delta")
	} else {
		dst = d.event(dst, "response.output_text.delta")
	}
	dst = d.appendItemRef(dst, it)
	dst = append(dst, `,"delta":`...)
	dst = jsonstr.Append(dst, t)
	if kind == itemMessage {
		dst = append(dst, `,"logprobs":[`...)
		dst = append(dst, lp...)
		dst = append(dst, ']')
		if len(lp) > 0 {
			if len(it.lp) > 0 {
				it.lp = append(it.lp, ',')
			}
			it.lp = append(it.lp, lp...)
		}
	}
	return append(dst, "}\n\n"...)
}

// newItemID is the id of the next message or reasoning item.
func (d *responsesDoor) newItemID(kind byte) []byte {
	if kind == itemReasoning {
		return d.itemID("rs_", len(d.items))
	}
	return d.itemID("msg_", len(d.items))
}

// appendThinkingBlock appends an element of a delta's thinking_blocks
// (a codec's signed thinking, providers.Request.ThinkingBlocks): a
// thinking one's signature seals the open reasoning item (opened when no
// reasoning came before it) with its encrypted_content and closes it,
// so that reasoning after it is another item; a redacted_thinking one
// is a whole reasoning item of its own, with no summary.
func (d *responsesDoor) appendThinkingBlock(dst []byte, tb *fastjson.Value) []byte {
	var p llm.Part
	switch string(tb.GetStringBytes("type")) {
	case "thinking":
		if t := tb.GetStringBytes("thinking"); len(t) > 0 {
			dst = d.appendText(dst, itemReasoning, t, nil)
		}
		sig := tb.GetStringBytes("signature")
		if len(sig) == 0 {
			return dst
		}
		if d.open < 0 || d.items[d.open].kind != itemReasoning {
			dst = d.openItem(dst, responsesItem{kind: itemReasoning, id: d.newItemID(itemReasoning)})
		}
		p = llm.Part{Kind: llm.PartThinking, Text: string(d.items[d.open].tx), Signature: string(sig)}
	case "redacted_thinking":
		dst = d.openItem(dst, responsesItem{kind: itemReasoning, id: d.newItemID(itemReasoning)})
		p = llm.Part{Kind: llm.PartRedactedThinking, Data: string(tb.GetStringBytes("data"))}
	default:
		return dst
	}
	it := &d.items[d.open]
	it.enc = llm.AppendThinkingContent(it.enc[:0], &p)
	return d.closeItem(dst)
}

// event appends the head of an event of type typ, up to and including its
// sequence_number; the caller appends the rest, "}" and the blank line.
func (d *responsesDoor) event(dst []byte, typ string) []byte {
	dst = append(dst, "event: "...)
	dst = append(dst, typ...)
	dst = append(dst, "\ndata: {\"type\":\""...)
	dst = append(dst, typ...)
	dst = append(dst, `","sequence_number":`...)
	dst = strconv.AppendInt(dst, d.seq, 10)
	d.seq++
	return dst
}

// appendItemRef appends the item_id and output_index of the open item,
// and the index of its one part: a message's content_index, reasoning's
// summary_index.
func (d *responsesDoor) appendItemRef(dst []byte, it *responsesItem) []byte {
	dst = append(dst, `,"item_id":`...)
	dst = jsonstr.Append(dst, it.id)
	dst = append(dst, `,"output_index":`...)
	dst = strconv.AppendInt(dst, int64(d.open), 10)
	switch it.kind {
	case itemMessage:
		dst = append(dst, `,"content_index":0`...)
	case itemReasoning:
		dst = append(dst, `,"summary_index":0`...)
	}
	return dst
}

// appendStart appends response.created and response.in_progress.
func (d *responsesDoor) appendStart(dst []byte) []byte {
	d.started, d.open = true, -1
	if d.id == nil {
		d.id = []byte("resp_")
	}
	for _, typ := range [...]string{"response.created", "response.in_progress"} {
		dst = d.event(dst, typ)
		dst = append(dst, `,"response":`...)
		dst = d.appendResponse(dst, false)
		dst = append(dst, "}\n\n"...)
	}
	return dst
}

// openItem closes the open item and opens it.
func (d *responsesDoor) openItem(dst []byte, it responsesItem) []byte {
	dst = d.closeItem(dst)
	d.items = append(d.items, it)
	d.open = len(d.items) - 1
	p := &d.items[d.open]
	dst = d.event(dst, "response.output_item.added")
	dst = append(dst, `,"output_index":`...)
	dst = strconv.AppendInt(dst, int64(d.open), 10)
	dst = append(dst, `,"item":`...)
	dst = p.appendTo(dst, "in_progress", d.wantsEncrypted())
	return append(dst, "}\n\n"...)
}

// closeItem appends the done events of the open item, if any.
func (d *responsesDoor) closeItem(dst []byte) []byte {
	if d.open < 0 {
		return dst
	}
	p := &d.items[d.open]
	switch {
	case p.kind == itemCall:
		dst = d.event(dst, "response.function_call_arguments.done")
		dst = d.appendItemRef(dst, p)
		dst = append(dst, `,"name":`...)
		dst = jsonstr.Append(dst, p.name)
		dst = append(dst, `,"arguments":`...)
		dst = jsonstr.Append(dst, p.tx)
		dst = append(dst, "}\n\n"...)
	case p.part:
		if p.kind == itemReasoning {
			dst = d.event(dst, "response.reasoning_summary_text.done")
		} else {
			dst = d.event(dst, "response.output_text.done")
		}
		dst = d.appendItemRef(dst, p)
		dst = append(dst, `,"text":`...)
		dst = jsonstr.Append(dst, p.tx)
		if p.kind == itemMessage {
			dst = append(dst, `,"logprobs":[`...)
			dst = append(dst, p.lp...)
			dst = append(dst, ']')
		}
		dst = append(dst, "}\n\n"...)
		if p.kind == itemReasoning {
			dst = d.event(dst, "response.reasoning_summary_part.done")
		} else {
			dst = d.event(dst, "response.content_part.done")
		}
		dst = d.appendItemRef(dst, p)
		dst = append(dst, `,"part":`...)
		dst = p.appendPart(dst, p.tx)
		dst = append(dst, "}\n\n"...)
	}
	dst = d.event(dst, "response.output_item.done")
	dst = append(dst, `,"output_index":`...)
	dst = strconv.AppendInt(dst, int64(d.open), 10)
	dst = append(dst, `,"item":`...)
	dst = p.appendTo(dst, "completed", d.wantsEncrypted())
	d.open = -1
	return append(dst, "}\n\n"...)
}

// appendEnd closes the open item and appends response.completed (or
// response.incomplete) with the whole response; or, when e cut the stream
// short, an error event: Responses' fields and the error of §3.
func (d *responsesDoor) appendEnd(dst []byte, e *apierr.Error) []byte {
	if !d.started {
		dst = d.appendStart(dst)
	}
	if e != nil {
		dst = d.event(dst, "error")
		dst = append(dst, `,"code":`...)
		dst = jsonstr.Append(dst, e.Code)
		dst = append(dst, `,"message":`...)
		dst = jsonstr.Append(dst, e.Message)
		dst = append(dst, `,"param":`...)
		if e.Param != "" {
			dst = jsonstr.Append(dst, e.Param)
		} else {
			dst = append(dst, "null"...)
		}
		// The error of §3 as well: the OpenAI SDKs raise an event whose
		// data has an error object.
		dst = append(dst, `,"error":`...)
		dst = append(dst, e.Body()[len(`{"error":`):]...)
		return append(dst, "\n\n"...)
	}
	dst = d.closeItem(dst)
	typ := "response.completed"
	if s, _ := d.status(); s == "incomplete" {
		typ = "response.incomplete"
	}
	dst = d.event(dst, typ)
	dst = append(dst, `,"response":`...)
	dst = d.appendResponse(dst, true)
	return append(dst, "}\n\n"...)
}
