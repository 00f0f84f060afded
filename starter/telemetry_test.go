package main

import (
	"io"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/todoflow/todoflow/internal/telemetrytest"
	"github.com/todoflow/todoflow/worker/telemetry"
)

// With OTEL_EXPORTER_OTLP_ENDPOINT set, a command traces what it does, and
// sends its spans before it exits: `starter run`'s start of the run and the
// activities that served it are one trace. Its embedded server is not
// traced.
func TestRunTraced(t *testing.T) {
	realBinary(t)
	t.Setenv("TODOFLOW_STATE_DIR", t.TempDir())
	t.Setenv("TEMPORAL_ADDRESS", "")
	model := httptest.NewServer(&stubModel{})
	defer model.Close()
	t.Setenv("OPENAI_BASE_URL", model.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "sk-test")
	t.Setenv("TODOFLOW_MODEL", "openai:stub")
	for _, k := range []string{telemetry.EnvTracesEndpoint, telemetry.EnvProtocol, telemetry.EnvTracesProtocol, telemetry.EnvTracesExporter, telemetry.EnvSDKDisabled, "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES"} {
		t.Setenv(k, "")
	}
	collector, endpoint := telemetrytest.NewHTTP(t)
	t.Setenv(telemetry.EnvEndpoint, endpoint)
	// What a user with an HTTP collector sets; the embedded server, which
	// traces only over gRPC, must not see it (or it would not start).
	t.Setenv(telemetry.EnvTracesExporter, "otlp")
	t.Setenv(telemetry.EnvTracesProtocol, "http/protobuf")

	var code int
	stdout, stderr := captureOutput(t, func() {
		code = runCLI([]string{"run", "--json", "--id", "traced-1", "--", "hi"}, io.Discard, os.Stderr)
	}, nil)
	if code != 0 {
		t.Fatalf("exit %d; stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	starts := collector.Named("StartWorkflow:AgentWorkflow")
	calls := collector.Named("RunActivity:CallModel")
	if len(starts) != 1 || len(calls) != 1 {
		t.Fatalf("%d StartWorkflow and %d RunActivity:CallModel spans, want 1 each; all: %+v", len(starts), len(calls), collector.Spans())
	}
	if calls[0].TraceID != starts[0].TraceID {
		t.Errorf("the model call's span is in trace %s, the start's in %s", calls[0].TraceID, starts[0].TraceID)
	}
	if starts[0].Service != "todoflow-starter" || starts[0].Attrs["temporalWorkflowID"] != "traced-1" {
		t.Errorf("start span of service %q with attributes %v", starts[0].Service, starts[0].Attrs)
	}
	for _, sp := range collector.Spans() {
		if sp.Service != "todoflow-starter" {
			t.Errorf("span %s of service %q", sp.Name, sp.Service)
		}
	}
}
