package telemetry

import (
	"context"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/todoflow/todoflow/internal/telemetrytest"
)

// What the handler is told comes out under Prometheus' names: counters with
// _total, timers as histograms in seconds with SecondsBuckets, gauges as
// they are; no OpenTelemetry scope labels, no target_info, and the Go
// runtime's metrics beside them.
func TestMetrics(t *testing.T) {
	m, err := NewMetrics()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	h := m.MetricsHandler().WithTags(map[string]string{"namespace": "default"})
	h.WithTags(map[string]string{"tool": "read_file", "outcome": "ok"}).Counter("todoflow_tool_calls").Inc(3)
	h.WithTags(map[string]string{"tool": "read_file", "outcome": "error"}).Counter("todoflow_tool_calls").Inc(1)
	h.WithTags(map[string]string{"outcome": "ok"}).Timer("todoflow_model_call_latency").Record(1500 * time.Millisecond)
	h.Gauge("temporal_worker_task_slots_available").Update(4)

	srv := httptest.NewServer(m.HTTPHandler())
	t.Cleanup(srv.Close)
	s := telemetrytest.Get(t, srv.URL)

	tests := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"todoflow_tool_calls_total", map[string]string{"tool": "read_file", "outcome": "ok", "namespace": "default"}, 3},
		{"todoflow_tool_calls_total", map[string]string{"tool": "read_file", "outcome": "error"}, 1},
		{"todoflow_model_call_latency_seconds_count", map[string]string{"outcome": "ok"}, 1},
		{"todoflow_model_call_latency_seconds_sum", map[string]string{"outcome": "ok"}, 1.5},
		{"todoflow_model_call_latency_seconds_bucket", map[string]string{"le": "1"}, 0},
		{"todoflow_model_call_latency_seconds_bucket", map[string]string{"le": "2.5"}, 1},
		{"temporal_worker_task_slots_available", nil, 4},
	}
	for _, tt := range tests {
		if got := s.Sum(tt.name, tt.labels); got != tt.want {
			t.Errorf("%s%v = %g, want %g; served:\n%s", tt.name, tt.labels, got, tt.want, s.Named(tt.name))
		}
	}
	var bounds []string
	for _, x := range s {
		if x.Name == "todoflow_model_call_latency_seconds_bucket" {
			bounds = append(bounds, x.Labels["le"])
		}
	}
	var want []string
	for _, b := range SecondsBuckets {
		want = append(want, strconv.FormatFloat(b, 'g', -1, 64))
	}
	if want = append(want, "+Inf"); !slices.Equal(bounds, want) {
		t.Errorf("latency buckets %v, want %v", bounds, want)
	}
	for _, x := range s {
		if _, ok := x.Labels["otel_scope_name"]; ok || x.Name == "target_info" {
			t.Errorf("served %s", x)
		}
	}
	if s.Series("go_goroutines", nil) != 1 {
		t.Errorf("no go_goroutines among the metrics served")
	}
}
