package telemetry

import (
	"context"
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/otlptranslator"
	"go.opentelemetry.io/otel"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
)

// SecondsBuckets are the bucket bounds, in seconds, of every histogram in
// seconds: the SDK's latencies (a poll, a workflow task: milliseconds) and
// the model calls (seconds to minutes; an attempt is cut after 10 minutes).
var SecondsBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

// Metrics holds a process's metrics: the Temporal SDK's and todoflow's,
// reported to MetricsHandler, and the Go runtime's and the process's, all in
// one Prometheus registry of its own (not the global one), served by
// HTTPHandler.
type Metrics struct {
	provider *sdkmetric.MeterProvider
	registry *prometheus.Registry
	handler  client.MetricsHandler
}

// NewMetrics returns an empty set of metrics.
func NewMetrics() (*Metrics, error) {
	reg := prometheus.NewRegistry()
	if err := reg.Register(collectors.NewGoCollector()); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	if err := reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	exporter, err := otelprom.New(
		otelprom.WithRegisterer(reg),
		// Prometheus names, said explicitly: the exporter's default may
		// change, and docs/observability.md lists these names.
		otelprom.WithTranslationStrategy(otlptranslator.UnderscoreEscapingWithSuffixes),
		// No otel_scope_* labels on every series and no target_info: the
		// scrape's job and instance say which process it is.
		otelprom.WithoutScopeInfo(),
		otelprom.WithoutTargetInfo(),
	)
	if err != nil {
		return nil, fmt.Errorf("metrics: Prometheus exporter: %w", err)
	}
	provider := sdkmetric.NewMeterProvider(
		sdkmetric.WithReader(exporter),
		sdkmetric.WithView(sdkmetric.NewView(
			sdkmetric.Instrument{Kind: sdkmetric.InstrumentKindHistogram, Unit: "s"},
			sdkmetric.Stream{Aggregation: sdkmetric.AggregationExplicitBucketHistogram{Boundaries: SecondsBuckets}},
		)),
	)
	handler := temporalotel.NewMetricsHandler(temporalotel.MetricsHandlerOptions{
		Meter: provider.Meter("todoflow"),
		// Counters only go up, so Prometheus gets counters (_total), not
		// gauges.
		UseMonotonicCounters: true,
		// The handler panics on an instrument it cannot make by default;
		// a metric is not worth a worker.
		OnError: otel.Handle,
	})
	return &Metrics{provider: provider, registry: reg, handler: handler}, nil
}

// MetricsHandler is the handler to dial the Temporal client with
// (client.Options.MetricsHandler): the SDK's metrics and todoflow's own
// (reported by the activities through the client's handler) go there.
func (m *Metrics) MetricsHandler() client.MetricsHandler { return m.handler }

// HTTPHandler serves the metrics in Prometheus' text format (or
// OpenMetrics, when the scraper asks for it).
func (m *Metrics) HTTPHandler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{EnableOpenMetrics: true})
}

// Shutdown stops the meter provider; the handler reports nothing after it.
func (m *Metrics) Shutdown(ctx context.Context) error {
	return m.provider.Shutdown(ctx)
}

// EnvMetricsAddr is the environment variable of the worker's metrics
// address (its --metrics-addr).
const EnvMetricsAddr = "TODOFLOW_METRICS_ADDR"
