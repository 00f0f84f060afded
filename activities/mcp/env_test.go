package mcp

import (
	"runtime"
	"slices"
	"strings"
	"testing"
)

// A stdio server gets what every program needs and its own env; none of the
// worker's secrets, whatever their name.
func TestChildEnv(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the list differs on Windows")
	}
	for _, kv := range []string{"PATH=/usr/bin", "HOME=/home/w", "LC_ALL=C.UTF-8", "TZ=UTC",
		"OPENAI_API_KEY=sk-secret", "TODOFLOW_PAYLOAD_KEY=k", "TODOFLOW_WEBHOOK_HEADERS_OPS={}",
		"TEMPORAL_API_KEY=t", "AWS_SECRET_ACCESS_KEY=a", "BILLING_TOKEN=b", "LD_PRELOAD=/tmp/x.so"} {
		name, value, _ := strings.Cut(kv, "=")
		t.Setenv(name, value)
	}
	got := childEnv([]string{"LOG_LEVEL=warn", "GITHUB_TOKEN=given"})
	for _, tt := range []struct {
		kv   string
		want bool
	}{
		{"PATH=/usr/bin", true},
		{"HOME=/home/w", true},
		{"LC_ALL=C.UTF-8", true},
		{"TZ=UTC", true},
		{"LOG_LEVEL=warn", true},
		{"GITHUB_TOKEN=given", true},
		{"OPENAI_API_KEY=sk-secret", false},
		{"TODOFLOW_PAYLOAD_KEY=k", false},
		{"TODOFLOW_WEBHOOK_HEADERS_OPS={}", false},
		{"TEMPORAL_API_KEY=t", false},
		{"AWS_SECRET_ACCESS_KEY=a", false},
		{"BILLING_TOKEN=b", false},
		{"LD_PRELOAD=/tmp/x.so", false},
	} {
		if slices.Contains(got, tt.kv) != tt.want {
			t.Errorf("childEnv has %q: %v, want %v (env %q)", tt.kv, !tt.want, tt.want, got)
		}
	}
}
