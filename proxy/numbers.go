package proxy

import (
	"math"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/apierr"
	"github.com/sluicehq/sluice/llm"
)

// numberRule bounds one numeric parameter of a request, after OpenAI's
// API reference (the schema Sluice takes for every provider).
type numberRule struct {
	name     string
	integer  bool
	min, max float64
	ops      opSet
}

// opSet is a set of operations a rule applies to.
type opSet uint8

const (
	chatOps       opSet = 1 << llm.OpChat
	completionOps opSet = 1 << llm.OpCompletions
	embeddingOps  opSet = 1 << llm.OpEmbeddings
)

// numberRules are checked besides n and max_tokens (parseBody), which the
// gateway reads itself.
var numberRules = []numberRule{
	{name: "temperature", min: 0, max: 2, ops: chatOps | completionOps},
	{name: "top_p", min: 0, max: 1, ops: chatOps | completionOps},
	{name: "frequency_penalty", min: -2, max: 2, ops: chatOps | completionOps},
	{name: "presence_penalty", min: -2, max: 2, ops: chatOps | completionOps},
	{name: "seed", integer: true, min: math.MinInt64, max: math.MaxInt64, ops: chatOps | completionOps},
	{name: "top_logprobs", integer: true, min: 0, max: 20, ops: chatOps},
	{name: "logprobs", integer: true, min: 0, max: 5, ops: completionOps},
	{name: "best_of", integer: true, min: 0, max: 20, ops: completionOps},
	{name: "dimensions", integer: true, min: 1, max: math.MaxInt32, ops: embeddingOps},
}

// checkNumbers refuses, naming the parameter, a number anywhere in the
// body that is not finite as a double (1e400 and the like: parsers read it
// as infinity, as an error or as a big number, so the gateway and the
// upstream would disagree), and a numeric parameter out of its range or
// not an integer where one is due. NaN and Infinity are not JSON and never
// get here.
func checkNumbers(obj *fastjson.Object, op llm.Operation) *apierr.Error {
	var bad []byte
	obj.Visit(func(k []byte, v *fastjson.Value) {
		if bad == nil && !finite(v) {
			bad = k
		}
	})
	if bad != nil {
		return apierr.Invalid(string(bad), "%s holds a number too large to be represented (a finite double)", bad)
	}
	for _, r := range numberRules {
		if r.ops&(1<<op) == 0 {
			continue
		}
		x := obj.Get(r.name)
		if x == nil || x.Type() == fastjson.TypeNull {
			continue
		}
		if e := r.check(x); e != nil {
			return e
		}
	}
	if lb := obj.Get("logit_bias"); lb != nil && lb.Type() == fastjson.TypeObject {
		o, _ := lb.Object()
		ok := true
		o.Visit(func(_ []byte, v *fastjson.Value) {
			if n, err := v.Int64(); err != nil || n < -100 || n > 100 {
				ok = false
			}
		})
		if !ok {
			return apierr.Invalid("logit_bias", "logit_bias values must be integers between -100 and 100")
		}
	}
	return nil
}

// check applies r to x, which is present and not null.
func (r numberRule) check(x *fastjson.Value) *apierr.Error {
	if r.integer {
		n, err := x.Int64()
		if err != nil || float64(n) < r.min || float64(n) > r.max {
			if r.min == math.MinInt64 {
				return apierr.Invalid(r.name, "%s must be a 64-bit integer", r.name)
			}
			return apierr.Invalid(r.name, "%s must be an integer between %g and %g", r.name, r.min, r.max)
		}
		return nil
	}
	f, err := x.Float64()
	if err != nil || math.IsNaN(f) || f < r.min || f > r.max {
		return apierr.Invalid(r.name, "%s must be a number between %g and %g", r.name, r.min, r.max)
	}
	return nil
}

// finite reports whether every number in v is a finite double.
func finite(v *fastjson.Value) bool {
	switch v.Type() {
	case fastjson.TypeNumber:
		f, err := v.Float64()
		return err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
	case fastjson.TypeArray:
		for _, c := range v.GetArray() {
			if !finite(c) {
				return false
			}
		}
	case fastjson.TypeObject:
		o, _ := v.Object()
		ok := true
		o.Visit(func(_ []byte, c *fastjson.Value) {
			if ok && !finite(c) {
				ok = false
			}
		})
		return ok
	}
	return true
}
