package telemetry

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
)

// OpenTelemetry's standard environment variables that decide whether and
// how a process traces (the exporters read the rest: headers, TLS, timeout).
const (
	EnvEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	EnvTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	EnvTracesExporter = "OTEL_TRACES_EXPORTER"
	EnvSDKDisabled    = "OTEL_SDK_DISABLED"
)

// Tracing sends the spans of the Temporal SDK's tracing interceptor to an
// OTLP collector. A nil *Tracing traces nothing; its methods may be called
// all the same, so that a main needs no branch.
type Tracing struct {
	provider    *sdktrace.TracerProvider
	interceptor interceptor.Interceptor
	protocol    string
	endpoint    string
}

// StartTracing sets up tracing as OpenTelemetry's environment variables
// say, for a process that calls itself service unless OTEL_SERVICE_NAME (or
// service.name in OTEL_RESOURCE_ATTRIBUTES) names it otherwise. It returns
// nil when no OTLP endpoint is set, or when OTEL_SDK_DISABLED=true or
// OTEL_TRACES_EXPORTER=none say not to trace. A protocol or an exporter it
// does not know is an error that names the variable.
func StartTracing(ctx context.Context, service string) (*Tracing, error) {
	endpoint := cmp.Or(os.Getenv(EnvTracesEndpoint), os.Getenv(EnvEndpoint))
	if endpoint == "" || strings.EqualFold(os.Getenv(EnvSDKDisabled), "true") {
		return nil, nil
	}
	switch exporter := os.Getenv(EnvTracesExporter); exporter {
	case "", "otlp":
	case "none":
		return nil, nil
	default:
		return nil, fmt.Errorf("%s=%q: todoflow exports traces with otlp (or none)", EnvTracesExporter, exporter)
	}
	protocolVar := EnvTracesProtocol
	protocol := os.Getenv(EnvTracesProtocol)
	if protocol == "" {
		protocolVar, protocol = EnvProtocol, os.Getenv(EnvProtocol)
	}
	var (
		exporter sdktrace.SpanExporter
		err      error
	)
	switch protocol {
	case "", "http/protobuf", "http/json":
		// The exporter reads the endpoint, headers, TLS, compression and
		// timeout variables itself, the protocol's included.
		protocol = cmp.Or(protocol, "http/protobuf")
		exporter, err = otlptracehttp.New(ctx)
	case "grpc":
		exporter, err = otlptracegrpc.New(ctx)
	default:
		return nil, fmt.Errorf("%s=%q: want grpc, http/protobuf or http/json", protocolVar, protocol)
	}
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter (%s, %s): %w", protocol, endpoint, err)
	}
	// The environment's resource (OTEL_SERVICE_NAME,
	// OTEL_RESOURCE_ATTRIBUTES) wins over the default service name.
	env, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK(), resource.WithHost())
	if err != nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	res, err := resource.Merge(resource.NewSchemaless(semconv.ServiceName(service)), env)
	if err != nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	provider := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
	ic, err := temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{Tracer: provider.Tracer("todoflow")})
	if err != nil {
		_ = provider.Shutdown(ctx)
		return nil, fmt.Errorf("tracing: interceptor: %w", err)
	}
	return &Tracing{provider: provider, interceptor: ic, protocol: protocol, endpoint: endpoint}, nil
}

// Interceptors are the client interceptors that trace (the SDK's tracing
// interceptor, which the client's workers use too); none for a nil t.
func (t *Tracing) Interceptors() []interceptor.ClientInterceptor {
	if t == nil {
		return nil
	}
	return []interceptor.ClientInterceptor{t.interceptor}
}

// Shutdown sends the spans not sent yet and stops tracing; call it before
// the process exits, or the last spans are lost.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	if err := t.provider.Shutdown(ctx); err != nil {
		return fmt.Errorf("tracing: send the last spans to %s: %w", t.endpoint, err)
	}
	return nil
}

// String says where the spans go, for a log line.
func (t *Tracing) String() string {
	if t == nil {
		return "off"
	}
	return fmt.Sprintf("OTLP %s to %s", t.protocol, t.endpoint)
}
