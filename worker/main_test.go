package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/internal/telemetrytest"
)

// --metrics-addr serves what the client's handler is told at /metrics, and
// nothing else.
func TestServeMetrics(t *testing.T) {
	m, at, shutdown, err := serveMetrics(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown()
	m.MetricsHandler().WithTags(map[string]string{"tool": "read_file", "outcome": "ok"}).Counter("todoflow_tool_calls").Inc(2)

	base := "http://" + at.String()
	s := telemetrytest.Get(t, base+"/metrics")
	if got := s.Sum("todoflow_tool_calls_total", map[string]string{"tool": "read_file", "outcome": "ok"}); got != 2 {
		t.Errorf("todoflow_tool_calls_total = %g, want 2; served:\n%s", got, s.Named("todoflow_tool_calls_total"))
	}
	for _, tt := range []struct {
		method, path string
		want         int
	}{
		{http.MethodGet, "/", http.StatusNotFound},
		{http.MethodGet, "/debug/pprof/", http.StatusNotFound},
		{http.MethodPost, "/metrics", http.StatusMethodNotAllowed},
	} {
		req, _ := http.NewRequest(tt.method, base+tt.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s %s: %s, want %d", tt.method, tt.path, resp.Status, tt.want)
		}
	}

	shutdown()
	if _, err := http.Get(base + "/metrics"); err == nil {
		t.Errorf("the metrics server still answers after shutdown")
	}
}

func TestServeMetricsBadAddress(t *testing.T) {
	_, _, _, err := serveMetrics(context.Background(), "127.0.0.1:99999")
	if err == nil || !strings.Contains(err.Error(), "--metrics-addr") {
		t.Fatalf("serveMetrics error = %v, want one naming --metrics-addr", err)
	}
}
