// Package money holds amounts of US dollars as integer nano-dollars, so that
// sums of many small costs do not drift.
package money

import (
	"fmt"
	"io"
	"math"
	"math/bits"
	"strconv"
)

// USD is an amount in nano-dollars (1e-9 USD). On the wire (JSON and
// GraphQL) it is a number of dollars.
type USD int64

// PerDollar is the number of nano-dollars in a dollar.
const PerDollar = 1_000_000_000

// FromFloat converts dollars to USD, rounding to the nearest nano-dollar.
func FromFloat(d float64) USD { return USD(math.Round(d * PerDollar)) }

// Float returns the amount in dollars.
func (u USD) Float() float64 { return float64(u) / PerDollar }

// String formats the amount in dollars.
func (u USD) String() string { return strconv.FormatFloat(u.Float(), 'f', -1, 64) }

// MarshalJSON writes the amount as a number of dollars.
func (u USD) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, u.Float(), 'f', -1, 64), nil
}

// UnmarshalJSON reads a number of dollars. It refuses NaN, infinities and
// amounts beyond ±9e9 dollars, which would overflow.
func (u *USD) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("amount %s is not a number", b)
	}
	return u.set(f)
}

func (u *USD) set(f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 9e9 {
		return fmt.Errorf("amount %v is out of range", f)
	}
	*u = FromFloat(f)
	return nil
}

// MarshalGQL writes the amount as a GraphQL Float.
func (u USD) MarshalGQL(w io.Writer) {
	_, _ = w.Write(strconv.AppendFloat(nil, u.Float(), 'f', -1, 64))
}

// UnmarshalGQL reads a GraphQL Float or Int.
func (u *USD) UnmarshalGQL(v any) error {
	switch x := v.(type) {
	case float64:
		return u.set(x)
	case int:
		return u.set(float64(x))
	case int64:
		return u.set(float64(x))
	case interface{ Float64() (float64, error) }: // json.Number
		f, err := x.Float64()
		if err != nil {
			return err
		}
		return u.set(f)
	}
	return fmt.Errorf("amount must be a number, got %T", v)
}

// PerMTok is a price in nano-dollars per million tokens.
type PerMTok = USD

// Cost returns the cost of n tokens at price p per million tokens, rounded
// down to the nano-dollar. The product is computed in 128 bits, so it is
// exact for every n and p; a result beyond the range of USD saturates.
// Negative inputs cost 0.
func Cost(n int64, p PerMTok) USD {
	if n <= 0 || p <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(n), uint64(p))
	if hi >= 1_000_000 { // quotient would not fit in 64 bits
		return USD(math.MaxInt64)
	}
	q, _ := bits.Div64(hi, lo, 1_000_000)
	if q > math.MaxInt64 {
		return USD(math.MaxInt64)
	}
	return USD(q)
}

// Priced is a count of tokens at a price per million tokens: one line of a
// bill.
type Priced struct {
	Tokens int64
	Price  PerMTok
}

// Total returns the cost of every line, rounded down to the nano-dollar
// once, on the exact sum: a bill of several lines is never a few
// nano-dollars short of its price for having rounded each line. The sum
// is computed in 128 bits; a result beyond the range of USD saturates.
// Lines with a negative count or price cost 0.
func Total(lines ...Priced) USD {
	var hi, lo uint64
	for _, l := range lines {
		if l.Tokens <= 0 || l.Price <= 0 {
			continue
		}
		h, m := bits.Mul64(uint64(l.Tokens), uint64(l.Price))
		var carry uint64
		lo, carry = bits.Add64(lo, m, 0)
		hi, carry = bits.Add64(hi, h, carry)
		if carry != 0 || hi >= 1_000_000 {
			return USD(math.MaxInt64)
		}
	}
	q, _ := bits.Div64(hi, lo, 1_000_000)
	if q > math.MaxInt64 {
		return USD(math.MaxInt64)
	}
	return USD(q)
}

// Scale returns p × num / den rounded to the nearest nano-dollar: a price
// that is a multiple of another (a long-context tier that doubles every
// prompt price). A zero or negative den, or a result beyond the range of
// USD, returns p unchanged.
func Scale(p PerMTok, num, den USD) PerMTok {
	if den <= 0 || num <= 0 || p <= 0 {
		return p
	}
	hi, lo := bits.Mul64(uint64(p), uint64(num))
	lo, carry := bits.Add64(lo, uint64(den)/2, 0)
	hi += carry
	if hi >= uint64(den) {
		return p
	}
	q, _ := bits.Div64(hi, lo, uint64(den))
	if q > math.MaxInt64 {
		return p
	}
	return PerMTok(q)
}
