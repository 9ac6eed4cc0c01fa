package analytics

// recordOverhead is what a Record costs in memory besides its variable
// parts: the struct itself (about 400 bytes of fields and headers) and
// its short fixed-size strings (ids, timestamps as text when encoded).
const recordOverhead = 512

// spanOverhead and eventOverhead are the same for a Span and a
// GuardrailEvent.
const (
	spanOverhead  = 256
	eventOverhead = 256
)

// Size is about the bytes r holds in memory: its strings, bodies, maps
// and spans, plus a fixed overhead per struct. It is what the pipeline's
// byte bound counts (PipelineConfig.QueueBytes): an estimate from the
// lengths, cheap enough for every Enqueue, never below the bytes of the
// bodies that dominate large records.
func (r *Record) Size() int64 {
	n := recordOverhead + len(r.ID) + len(r.TenantID) + len(r.GatewayID) + len(r.TokenID) + len(r.UserID) +
		len(r.Provider) + len(r.Model) + len(r.Route) + len(r.ErrorCode) + len(r.Cache) + len(r.TraceID) +
		len(r.ClientIP) + len(r.UserAgent) + len(r.RequestBody) + len(r.ResponseBody) + len(r.Operation)
	for _, s := range r.RuleHits {
		n += 16 + len(s)
	}
	for _, s := range r.Flags {
		n += 16 + len(s)
	}
	for k, v := range r.Metadata {
		n += 32 + len(k) + len(v)
	}
	for i := range r.Spans {
		n += spanSize(&r.Spans[i])
	}
	for i := range r.Events {
		e := &r.Events[i]
		n += eventOverhead + len(e.ID) + len(e.RuleID) + len(e.RuleName) + len(e.Kind) + len(e.Action) +
			len(e.Direction) + len(e.Excerpt) + len(e.RequestID)
	}
	return int64(n)
}

func spanSize(s *Span) int {
	n := spanOverhead + len(s.TraceID) + len(s.SpanID) + len(s.ParentID) + len(s.Name) + len(s.Status)
	for k, v := range s.Attrs() {
		n += 32 + len(k) + len(v)
	}
	for _, c := range s.Children {
		n += spanSize(c)
	}
	return n
}
