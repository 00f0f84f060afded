// Package telemetry gives a todoflow process its metrics and its traces,
// with the Temporal SDK's OpenTelemetry integration
// (go.temporal.io/sdk/contrib/opentelemetry) for both.
//
// # One stack
//
// Traces need OpenTelemetry (the SDK's tracing interceptor for it), so the
// metrics go through it too: the SDK's metrics handler for OpenTelemetry
// feeds a meter provider whose reader is OpenTelemetry's Prometheus
// exporter, into a Prometheus registry of the process's own. One SDK, one
// set of modules, and the metrics could later go out over OTLP as the traces
// do. (The other way, tally with its Prometheus reporter, would add tally
// and the SDK's tally module on top of what tracing needs anyway.)
//
// # Metrics
//
// NewMetrics returns the handler to dial the Temporal client with
// (client.Options.MetricsHandler, or agentworker.DialOptions): the SDK
// reports its worker, poller, workflow task and activity metrics there, and
// todoflow's activities report theirs (package activities, metrics.go)
// through the same handler, so a scrape shows both. HTTPHandler serves them
// in the Prometheus text format; the worker binary serves it on
// --metrics-addr at /metrics.
//
// Names follow the Prometheus conventions that the exporter applies to the
// SDK's names: counters end in _total, timers are histograms in seconds
// (_seconds_bucket, _sum, _count), with buckets from 5 ms to 10 minutes
// (SecondsBuckets) instead of OpenTelemetry's defaults, which are meant for
// milliseconds.
//
// # Traces
//
// StartTracing reads OpenTelemetry's standard environment
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, the
// protocol, headers, TLS and timeout variables, OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER, OTEL_BSP_*); with no
// endpoint set it returns nil and nothing is traced. Otherwise its
// interceptor, added to the Temporal client, traces what the client starts,
// signals, updates and queries, and what the workers built on it run:
// workflows, activities, the updates and signals they handle. The span
// context travels in Temporal headers, so a run started by the starter and
// served by a worker elsewhere is one trace. Spans are batched and sent over
// OTLP (HTTP or gRPC, as OTEL_EXPORTER_OTLP_PROTOCOL says); Shutdown sends
// what is left.
//
// Replays make no spans of activities, timers or updates again: the SDK's
// interceptor creates those only while the workflow is not replaying.
package telemetry
