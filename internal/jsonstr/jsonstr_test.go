package jsonstr

import (
	"encoding/json"
	"testing"
)

func TestAppend(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", `""`},
		{"plain é ✓", `"plain é ✓"`},
		{"q\"b\\n\nr\rt\t\x00\x1f\x7f", `"q\"b\\n\nr\rt\t\u0000\u001f` + "\x7f" + `"`},
		{"bad\xffend", `"bad\ufffdend"`},
		{"ls\u2028ps\u2029", `"ls\u2028ps\u2029"`},
		{"<a href='x'>&</a>", `"<a href='x'>&</a>"`},
	} {
		if got := string(Append(nil, c.in)); got != c.want {
			t.Errorf("Append(%q) = %s, want %s", c.in, got, c.want)
		}
		if got := string(Append(nil, []byte(c.in))); got != c.want {
			t.Errorf("Append([]byte(%q)) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestAppendDoesNotAllocate(t *testing.T) {
	buf := make([]byte, 0, 256)
	b := []byte("héllo \xff \u2028 \"x\"")
	if n := testing.AllocsPerRun(100, func() { _ = Append(buf[:0], b) }); n != 0 {
		t.Errorf("Append of a []byte allocates %v times", n)
	}
}

// FuzzAppend checks that any text encodes as valid JSON that decodes to
// what encoding/json makes of it.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{"", "plain", "quote\" back\\slash", "\x00\x1f\x7f", "é✓\U0001F600", "\xff\xfe", "\u2028", "\xe2\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := Append(nil, s)
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%q encoded as %s: %v", s, b, err)
		}
		ref, _ := json.Marshal(s)
		var want string
		if err := json.Unmarshal(ref, &want); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%q: decoded %q, encoding/json gives %q", s, got, want)
		}
		if string(Append(nil, []byte(s))) != string(b) {
			t.Errorf("%q: the []byte and string forms differ", s)
		}
	})
}
