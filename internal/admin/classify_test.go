package admin

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/analytics"
	"github.com/sluicehq/sluice/internal/apierr"
)

// TestClassifyErrorAnalytics: the analytics backends return typed errors;
// ClassifyError is where they get their wire answer, the one they had when
// the backends built it themselves.
func TestClassifyErrorAnalytics(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want *apierr.Error
	}{
		{"cursor", fmt.Errorf("read logs: %w", analytics.InvalidCursor()),
			apierr.Invalid("cursor", "cursor is not valid")},
		{"interval", &analytics.QueryError{Param: "interval", Reason: "interval must be minute, hour or day"},
			apierr.Invalid("interval", "interval must be minute, hour or day")},
		{"reason with a verb", &analytics.QueryError{Param: "interval", Reason: "the range holds more than 100%s"},
			apierr.Invalid("interval", "%s", "the range holds more than 100%s")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := apierr.From(ClassifyError(tt.err))
			if !ok {
				t.Fatalf("ClassifyError(%v) carries no *apierr.Error", tt.err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("wire error (-want +got):\n%s", diff)
			}
		})
	}
	plain := errors.New("connection refused")
	if got := ClassifyError(plain); got != plain {
		t.Errorf("ClassifyError(plain) = %v, want it unchanged", got)
	}
}
