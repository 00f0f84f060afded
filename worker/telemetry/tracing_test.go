package telemetry

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/internal/telemetrytest"
)

// clearOTelEnv unsets the variables StartTracing reads, for the test.
func clearOTelEnv(t *testing.T) {
	for _, k := range []string{EnvEndpoint, EnvTracesEndpoint, EnvProtocol, EnvTracesProtocol, EnvTracesExporter, EnvSDKDisabled, "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES"} {
		t.Setenv(k, "")
	}
}

func TestStartTracingEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		on      bool
		wantErr string
	}{
		{"no endpoint", nil, false, ""},
		{"endpoint", map[string]string{EnvEndpoint: "http://127.0.0.1:4318"}, true, ""},
		{"traces endpoint", map[string]string{EnvTracesEndpoint: "http://127.0.0.1:4318/v1/traces"}, true, ""},
		{"grpc", map[string]string{EnvEndpoint: "http://127.0.0.1:4317", EnvProtocol: "grpc"}, true, ""},
		{"sdk disabled", map[string]string{EnvEndpoint: "http://127.0.0.1:4318", EnvSDKDisabled: "true"}, false, ""},
		{"exporter none", map[string]string{EnvEndpoint: "http://127.0.0.1:4318", EnvTracesExporter: "none"}, false, ""},
		{"unknown exporter", map[string]string{EnvEndpoint: "http://127.0.0.1:4318", EnvTracesExporter: "zipkin"}, false, `OTEL_TRACES_EXPORTER="zipkin"`},
		{"unknown protocol", map[string]string{EnvEndpoint: "http://127.0.0.1:4318", EnvProtocol: "thrift"}, false, `OTEL_EXPORTER_OTLP_PROTOCOL="thrift": want grpc, http/protobuf or http/json`},
		{"traces protocol wins", map[string]string{EnvEndpoint: "http://127.0.0.1:4318", EnvProtocol: "grpc", EnvTracesProtocol: "udp"}, false, `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL="udp"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearOTelEnv(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			tr, err := StartTracing(context.Background(), "todoflow-test")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("StartTracing error = %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Shutdown(context.Background())
			if on := tr != nil; on != tt.on {
				t.Fatalf("tracing on = %v (%s), want %v", on, tr, tt.on)
			}
			if n := len(tr.Interceptors()); n != map[bool]int{false: 0, true: 1}[tt.on] {
				t.Errorf("%d interceptors", n)
			}
		})
	}
}

func greet(ctx context.Context, name string) (string, error) { return "hello " + name, nil }

func greeting(ctx workflow.Context, name string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	var out string
	err := workflow.ExecuteActivity(ctx, greet, name).Get(ctx, &out)
	return out, err
}

// The interceptor's spans of a workflow and its activity reach a collector
// over each protocol, in one trace, under the process's service name.
func TestTracingExports(t *testing.T) {
	tests := []struct {
		protocol string
		service  string // OTEL_SERVICE_NAME, when set
	}{
		{"http/protobuf", ""},
		{"http/json", "my-worker"},
		{"grpc", ""},
	}
	for _, tt := range tests {
		t.Run(tt.protocol, func(t *testing.T) {
			clearOTelEnv(t)
			var (
				c        *telemetrytest.Collector
				endpoint string
			)
			if tt.protocol == "grpc" {
				c, endpoint = telemetrytest.NewGRPC(t)
				endpoint = "http://" + endpoint
			} else {
				c, endpoint = telemetrytest.NewHTTP(t)
			}
			t.Setenv(EnvEndpoint, endpoint)
			t.Setenv(EnvProtocol, tt.protocol)
			t.Setenv("OTEL_SERVICE_NAME", tt.service)
			tr, err := StartTracing(context.Background(), "todoflow-test")
			if err != nil {
				t.Fatal(err)
			}

			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			var wi []interceptor.WorkerInterceptor
			for _, ci := range tr.Interceptors() {
				wi = append(wi, ci.(interceptor.WorkerInterceptor))
			}
			env.SetWorkerOptions(worker.Options{Interceptors: wi})
			env.RegisterWorkflow(greeting)
			env.RegisterActivity(greet)
			env.ExecuteWorkflow(greeting, "you")
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			if err := tr.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}

			run := c.Named("RunWorkflow:greeting")
			start := c.Named("StartActivity:greet")
			act := c.Named("RunActivity:greet")
			if len(run) != 1 || len(start) != 1 || len(act) != 1 {
				t.Fatalf("spans %+v, want one each of RunWorkflow, StartActivity, RunActivity", c.Spans())
			}
			if act[0].TraceID != run[0].TraceID || act[0].ParentID != start[0].SpanID || start[0].ParentID != run[0].SpanID {
				t.Errorf("not one trace, workflow > start activity > run activity: %+v", c.Spans())
			}
			want := "todoflow-test"
			if tt.service != "" {
				want = tt.service
			}
			if act[0].Service != want {
				t.Errorf("service.name %q, want %q", act[0].Service, want)
			}
		})
	}
}
