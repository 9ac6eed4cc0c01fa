package proxy

import (
	"testing"

	"github.com/sluicehq/sluice/internal/canary"
)

// TestMain runs the package's tests under the canary check: no log line
// of the run, during or after a test, may hold a planted secret. The
// shared tokenizer loads its encodings first, as `sluice serve` does at
// start, so that no test's deadline includes that load.
func TestMain(m *testing.M) {
	testTokenizer.Warm()
	canary.Main(m)
}
