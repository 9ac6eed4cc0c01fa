package proxy

import (
	"math"

	"github.com/valyala/fastjson"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/llm"
)

// numberRule bounds one numeric parameter of a request, after OpenAI's
// API reference (the schema Sluice takes for every provider); ruleFor
// has them all.
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

// numberRule returns the rule of the top-level field name for op. A
// switch on the name costs no allocation and no scan per rule.
func ruleFor(name []byte, op llm.Operation) (numberRule, bool) {
	var r numberRule
	switch string(name) {
	case "temperature":
		r = numberRule{name: "temperature", min: 0, max: 2, ops: chatOps | completionOps}
	case "top_p":
		r = numberRule{name: "top_p", min: 0, max: 1, ops: chatOps | completionOps}
	case "frequency_penalty":
		r = numberRule{name: "frequency_penalty", min: -2, max: 2, ops: chatOps | completionOps}
	case "presence_penalty":
		r = numberRule{name: "presence_penalty", min: -2, max: 2, ops: chatOps | completionOps}
	case "seed":
		r = numberRule{name: "seed", integer: true, min: math.MinInt64, max: math.MaxInt64, ops: chatOps | completionOps}
	case "top_logprobs":
		r = numberRule{name: "top_logprobs", integer: true, min: 0, max: 20, ops: chatOps}
	case "logprobs":
		r = numberRule{name: "logprobs", integer: true, min: 0, max: 5, ops: completionOps}
	case "best_of":
		r = numberRule{name: "best_of", integer: true, min: 0, max: 20, ops: completionOps}
	case "dimensions":
		r = numberRule{name: "dimensions", integer: true, min: 1, max: math.MaxInt32, ops: embeddingOps}
	default:
		return r, false
	}
	return r, r.ops&(1<<op) != 0
}

// checkNumbers refuses, naming the parameter, a number anywhere in the
// body that is not finite as a double (1e400 and the like: parsers read it
// as infinity, as an error or as a big number, so the gateway and the
// upstream would disagree), and a numeric parameter out of its range or
// not an integer where one is due (n and max_tokens are parseBody's,
// which reads them). NaN and Infinity are not JSON and never get here.
// nonFinite says whether the body holds such a number anywhere
// (duplicateKey's walk found it); only then are the fields walked again
// to name the one that holds it. One pass over the top-level fields.
func checkNumbers(obj *fastjson.Object, op llm.Operation, nonFinite bool) *apierr.Error {
	var e *apierr.Error
	obj.Visit(func(k []byte, v *fastjson.Value) {
		switch {
		case e != nil:
		case nonFinite && !finite(v):
			e = apierr.Invalid(string(k), "%s holds a number too large to be represented (a finite double)", k)
		case v.Type() == fastjson.TypeNull:
		case string(k) == "logit_bias" && v.Type() == fastjson.TypeObject && op != llm.OpEmbeddings:
			if !logitBiasOK(v) {
				e = apierr.Invalid("logit_bias", "logit_bias values must be integers between -100 and 100")
			}
		default:
			if r, ok := ruleFor(k, op); ok {
				e = r.check(v)
			}
		}
	})
	return e
}

func logitBiasOK(v *fastjson.Value) bool {
	o, _ := v.Object()
	ok := true
	o.Visit(func(_ []byte, x *fastjson.Value) {
		if n, err := x.Int64(); err != nil || n < -100 || n > 100 {
			ok = false
		}
	})
	return ok
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
