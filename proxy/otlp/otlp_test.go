package otlp

import (
	"strings"
	"testing"
)

// Validate refuses an endpoint that is not a base http(s) URL, one that
// holds credentials (they would show in errors and logs), and a sampling
// ratio outside 0–1.
func TestConfigValidate(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string // "" means valid
	}{
		{Config{Endpoint: "http://127.0.0.1:4318", SamplingRatio: 1}, ""},
		{Config{Endpoint: "https://otel.example.com/base/", SamplingRatio: 0.1}, ""},
		{Config{Endpoint: "127.0.0.1:4318", SamplingRatio: 1}, "otlp endpoint"},
		{Config{Endpoint: "grpc://collector:4317", SamplingRatio: 1}, "http or https"},
		{Config{Endpoint: "http://user:s3cret@collector:4318", SamplingRatio: 1}, "credentials"},
		{Config{Endpoint: "http://collector:4318?token=x", SamplingRatio: 1}, "base URL"},
		{Config{Endpoint: "http://collector:4318", SamplingRatio: 1.5}, "sampling ratio"},
		{Config{Endpoint: "http://collector:4318", SamplingRatio: 1, QueueSize: -1}, "must not be negative"},
	}
	for _, tt := range tests {
		err := tt.cfg.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%+v: %v, want valid", tt.cfg, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%+v: %v, want an error about %q", tt.cfg, err, tt.want)
		case err != nil && strings.Contains(err.Error(), "s3cret"):
			t.Errorf("the error shows the endpoint's password: %v", err)
		}
	}
}
