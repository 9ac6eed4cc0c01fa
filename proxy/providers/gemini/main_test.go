package gemini

import (
	"testing"

	"github.com/sluicehq/sluice/internal/canary"
)

// TestMain runs the package's tests under the canary check: no log line
// of the run may hold a planted secret.
func TestMain(m *testing.M) { canary.Main(m) }
