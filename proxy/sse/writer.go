package sse

import "github.com/sluicehq/sluice/internal/jsonstr"

// Done is the OpenAI end-of-stream event.
var Done = []byte("data: [DONE]\n\n")

// AppendData appends the event "data: <data>\n\n" to dst and returns the
// extended slice. data must not contain CR or LF: it is one line, as a
// JSON chunk always is (JSON escapes both inside strings).
func AppendData(dst, data []byte) []byte {
	dst = append(dst, "data: "...)
	dst = append(dst, data...)
	return append(dst, "\n\n"...)
}

// AppendError appends an OpenAI-style error event,
// data: {"error":{"type":…,"code":…,"message":…,"param":null}}, to dst:
// the ErrorResponse of OpenAI's schema, which requires param (null here:
// no request field is at fault once a stream runs). The strings are
// JSON-escaped; invalid UTF-8 becomes U+FFFD.
func AppendError(dst []byte, typ, code, msg string) []byte {
	dst = append(dst, `data: {"error":{"type":`...)
	dst = jsonstr.Append(dst, typ)
	dst = append(dst, `,"code":`...)
	dst = jsonstr.Append(dst, code)
	dst = append(dst, `,"message":`...)
	dst = jsonstr.Append(dst, msg)
	return append(dst, `,"param":null}}`+"\n\n"...)
}
