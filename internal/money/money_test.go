package money_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/internal/money"
)

func TestJSONRoundTrip(t *testing.T) {
	tests := []struct {
		json string
		usd  money.USD
	}{
		{"12.5", 12_500_000_000},
		{"0", 0},
		{"1", money.PerDollar},
		{"0.000000001", 1},
		{"0.15", 150_000_000},
		{"-3.25", -3_250_000_000},
		{"9000000000", 9e9 * money.PerDollar},
	}
	for _, tt := range tests {
		t.Run(tt.json, func(t *testing.T) {
			var got money.USD
			if err := json.Unmarshal([]byte(tt.json), &got); err != nil {
				t.Fatalf("Unmarshal(%s): %v", tt.json, err)
			}
			if got != tt.usd {
				t.Errorf("Unmarshal(%s): got %d, want %d", tt.json, int64(got), int64(tt.usd))
			}
			b, err := json.Marshal(tt.usd)
			if err != nil {
				t.Fatalf("Marshal(%d): %v", int64(tt.usd), err)
			}
			if string(b) != tt.json {
				t.Errorf("Marshal(%d): got %s, want %s", int64(tt.usd), b, tt.json)
			}
		})
	}
}

func TestJSONInStruct(t *testing.T) {
	type body struct {
		Cost money.USD `json:"cost_usd"`
	}
	var got body
	if err := json.Unmarshal([]byte(`{"cost_usd":12.5}`), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(body{Cost: 12_500_000_000}, got); diff != "" {
		t.Errorf("unmarshal (-want +got):\n%s", diff)
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"cost_usd":12.5}`; string(b) != want {
		t.Errorf("marshal: got %s, want %s", b, want)
	}
}

func TestUnmarshalJSONRefuses(t *testing.T) {
	tests := []struct {
		name string
		in   string
	}{
		{"NaN", "NaN"},
		{"Inf", "Inf"},
		{"+Inf", "+Inf"},
		{"-Inf", "-Inf"},
		{"overflow float", "1e400"},
		{"huge", "9000000001"},
		{"huge negative", "-1e10"},
		{"string", `"12.5"`},
		{"bool", "true"},
		{"null text", "nul"},
		{"empty", ""},
		{"object", "{}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := money.USD(42)
			if err := u.UnmarshalJSON([]byte(tt.in)); err == nil {
				t.Errorf("UnmarshalJSON(%s): got %d and no error, want an error", tt.in, int64(u))
			}
			if u != 42 {
				t.Errorf("UnmarshalJSON(%s) changed the value on error: got %d, want 42", tt.in, int64(u))
			}
		})
	}
	t.Run("string through json.Unmarshal", func(t *testing.T) {
		var u money.USD
		if err := json.Unmarshal([]byte(`"12.5"`), &u); err == nil {
			t.Errorf("json.Unmarshal(\"12.5\"): got %d and no error, want an error", int64(u))
		}
	})
}

type number string

func (n number) Float64() (float64, error) { return json.Number(n).Float64() }

func TestUnmarshalGQL(t *testing.T) {
	tests := []struct {
		name    string
		in      any
		want    money.USD
		wantErr bool
	}{
		{"float64", 12.5, 12_500_000_000, false},
		{"int", 3, 3 * money.PerDollar, false},
		{"int64", int64(-2), -2 * money.PerDollar, false},
		{"json.Number", json.Number("0.15"), 150_000_000, false},
		{"Float64er", number("1.5"), 1_500_000_000, false},
		{"bad json.Number", json.Number("abc"), 0, true},
		{"string", "12.5", 0, true},
		{"nil", nil, 0, true},
		{"bool", true, 0, true},
		{"int32", int32(1), 0, true},
		{"NaN", math.NaN(), 0, true},
		{"+Inf", math.Inf(1), 0, true},
		{"huge float", 1e10, 0, true},
		{"huge int64", int64(1e12), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got money.USD
			err := got.UnmarshalGQL(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("UnmarshalGQL(%#v): got error %v, want error %v", tt.in, err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("UnmarshalGQL(%#v): got %d, want %d", tt.in, int64(got), int64(tt.want))
			}
		})
	}
}

func TestMarshalGQLAndString(t *testing.T) {
	tests := []struct {
		usd  money.USD
		want string
	}{
		{12_500_000_000, "12.5"},
		{0, "0"},
		{1, "0.000000001"},
		{-150_000_000, "-0.15"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			var buf bytes.Buffer
			tt.usd.MarshalGQL(&buf)
			if buf.String() != tt.want {
				t.Errorf("MarshalGQL(%d): got %s, want %s", int64(tt.usd), buf.String(), tt.want)
			}
			if got := tt.usd.String(); got != tt.want {
				t.Errorf("String(%d): got %s, want %s", int64(tt.usd), got, tt.want)
			}
		})
	}
}

func TestFromFloat(t *testing.T) {
	tests := []struct {
		in   float64
		want money.USD
	}{
		{2.5, 2_500_000_000},
		{0.1, 100_000_000},
		{0.0000000004, 0},
		{0.0000000006, 1},
		{-1.25, -1_250_000_000},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.in), func(t *testing.T) {
			if got := money.FromFloat(tt.in); got != tt.want {
				t.Errorf("FromFloat(%v): got %d, want %d", tt.in, int64(got), int64(tt.want))
			}
		})
	}
}

// exactCost is floor(n*p/1e6) computed without overflow.
func exactCost(n int64, p money.PerMTok) *big.Int {
	x := new(big.Int).Mul(big.NewInt(n), big.NewInt(int64(p)))
	return x.Quo(x, big.NewInt(1_000_000))
}

func TestCost(t *testing.T) {
	dollars := func(d int64) money.PerMTok { return money.PerMTok(d * money.PerDollar) }
	tests := []struct {
		name string
		n    int64
		p    money.PerMTok
		want money.USD
	}{
		{"1M tokens at $2.50", 1_000_000, money.FromFloat(2.5), money.FromFloat(2.5)},
		{"1 token at $0.15", 1, money.FromFloat(0.15), 150},
		{"zero tokens", 0, dollars(10), 0},
		{"zero price", 123_456, 0, 0},
		{"1.5M tokens at $2", 1_500_000, dollars(2), 3 * money.PerDollar},
		{"999,999 tokens at $1", 999_999, dollars(1), 999_999_000},
		{"1 token at $10000", 1, dollars(10_000), 10_000_000},
		{"999,999 tokens at $9000", 999_999, dollars(9_000), 8_999_991_000_000},
		// The exact result fits easily ($9,999.99) but n%1e6 * p does not.
		{"999,999 tokens at $10000", 999_999, dollars(10_000), 9_999_990_000_000},
		{"1e12 tokens at $9000", 1_000_000_000_000, dollars(9_000), 9_000_000_000_000_000_000},
		{"1e12-1 tokens at $9000", 999_999_999_999, dollars(9_000), 8_999_999_999_991_000_000},
		{"1e9+999,999 tokens at $10000", 1_000_999_999, dollars(10_000), 10_009_999_990_000_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := money.Cost(tt.n, tt.p)
			if got != tt.want {
				t.Errorf("Cost(%d, %d): got %d, want %d", tt.n, int64(tt.p), int64(got), int64(tt.want))
			}
			if ex := exactCost(tt.n, tt.p); !ex.IsInt64() || ex.Int64() != int64(tt.want) {
				t.Fatalf("test table is wrong: exact cost is %s, table says %d", ex, int64(tt.want))
			}
		})
	}
}

// TestCostNoOverflow checks Cost against exact arithmetic over n ≤ 1e12 and
// p ≤ $10000/Mtok, wherever the exact result fits in a USD.
func TestCostNoOverflow(t *testing.T) {
	ns := []int64{1, 999, 999_999, 1_000_000, 1_000_001, 123_456_789, 999_999_999, 1_000_000_000, 999_999_999_999, 1_000_000_000_000}
	ps := []money.PerMTok{1, 150_000_000, money.FromFloat(2.5), money.FromFloat(75), money.FromFloat(9_000),
		money.FromFloat(9_223), money.FromFloat(9_300), money.FromFloat(9_999.999999999), money.FromFloat(10_000)}
	for _, n := range ns {
		for _, p := range ps {
			ex := exactCost(n, p)
			if !ex.IsInt64() {
				continue // the true cost is beyond the range of USD
			}
			t.Run(fmt.Sprintf("n=%d,p=%d", n, int64(p)), func(t *testing.T) {
				if got := money.Cost(n, p); int64(got) != ex.Int64() {
					t.Errorf("Cost(%d, %d): got %d, want %s", n, int64(p), int64(got), ex)
				}
			})
		}
	}
}

// TestTotal: a bill of several lines is the exact sum rounded down once,
// never the sum of lines rounded apart; lines of no tokens or no price
// cost nothing; a sum past the range saturates.
func TestTotal(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []money.Priced
		want  money.USD
	}{
		{"none", nil, 0},
		{"one line", []money.Priced{{Tokens: 1200, Price: 3 * money.PerDollar}}, 3_600_000},
		// 1 token at $0.0000005 and 1 at $0.0000005 per token: each line
		// rounds to 0 nano-dollars, the sum is 1.
		{"rounded once", []money.Priced{{Tokens: 1, Price: 500_000}, {Tokens: 1, Price: 500_000}}, 1},
		{"negative lines", []money.Priced{{Tokens: -5, Price: money.PerDollar}, {Tokens: 5, Price: -1}, {Tokens: 2, Price: money.PerDollar}}, 2000},
		{"saturates", []money.Priced{{Tokens: math.MaxInt64, Price: math.MaxInt64}}, math.MaxInt64},
		{"saturates on the sum", []money.Priced{{Tokens: math.MaxInt64, Price: 1_000_000}, {Tokens: math.MaxInt64, Price: 1_000_000}}, math.MaxInt64},
	} {
		if got := money.Total(tc.lines...); got != tc.want {
			t.Errorf("%s: Total = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestScale: a price scaled by the ratio of two others, rounded to the
// nearest nano-dollar; a ratio that cannot be taken leaves it as it is.
func TestScale(t *testing.T) {
	usd := money.FromFloat
	for _, tc := range []struct {
		p, num, den, want money.PerMTok
	}{
		{usd(0.125), usd(2.50), usd(1.25), usd(0.25)}, // Gemini 2.5 Pro cached input above 200k
		{usd(3.75), usd(6), usd(3), usd(7.50)},        // Claude Sonnet 4.5 5m writes above 200k
		{usd(0.20), usd(4), usd(2), usd(0.40)},
		{1, 1, 3, 0},                                     // a third of a nano-dollar rounds to 0
		{2, 1, 3, 1},                                     // two thirds to 1
		{5, 0, 3, 5},                                     // no ratio
		{5, 3, 0, 5},                                     // no ratio
		{math.MaxInt64, math.MaxInt64, 1, math.MaxInt64}, // past the range: unchanged
	} {
		if got := money.Scale(tc.p, tc.num, tc.den); got != tc.want {
			t.Errorf("Scale(%d, %d, %d) = %d, want %d", tc.p, tc.num, tc.den, got, tc.want)
		}
	}
}
