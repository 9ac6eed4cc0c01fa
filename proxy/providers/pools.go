package providers

import (
	"sync"

	"github.com/valyala/fastjson"
)

// Pools and sizes shared by the codecs.

// MaxStreamEvent bounds one upstream stream event. OpenAI chunks are well
// under 1 KiB; a final chunk with long citations or tool arguments can be
// large, so the limit is generous, and the reader's buffer only grows as
// far as the events need.
const MaxStreamEvent = 4 << 20

var (
	// BodyParsers parse request bodies and answers: the OpenAI codec's
	// rewrite and usage reading, the translating codecs' answers and
	// stream events.
	BodyParsers fastjson.ParserPool
	// BodyBufs holds buffers for rewritten request bodies; buffers over
	// maxPooledBody are left to the GC so a rare huge body does not pin
	// memory.
	BodyBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}
)

const maxPooledBody = 1 << 20

// putBodyBuf returns a request body buffer to BodyBufs, unless it grew
// too large to keep.
func putBodyBuf(bp *[]byte) {
	if cap(*bp) <= maxPooledBody {
		BodyBufs.Put(bp)
	}
}
