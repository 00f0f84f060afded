// Command worker runs todoflow's AgentWorkflow and activities. With --dev it
// first starts the embedded Temporal dev server on the standard ports (gRPC
// 7233, Web UI 8233) with a persistent SQLite file in todoflow's state
// folder, so that `starter start` and the `temporal` CLI reach it by default.
//
// Besides its task queue, the worker polls a host queue of its own for the
// tool calls of the sessions whose workspace it holds (--host-queue, else a
// name kept in its state folder): see package agentworker.
//
// Model API keys and other secrets are read from this process's environment
// (OPENAI_API_KEY, OPENAI_BASE_URL) and never enter workflow history. So are
// the secrets of MCP servers: their configuration (--mcp-config or
// TODOFLOW_MCP_CONFIG) refers to them as ${NAME}.
//
// With --metrics-addr (or TODOFLOW_METRICS_ADDR) it serves Prometheus
// metrics, the SDK's and todoflow's own, at /metrics; with OpenTelemetry's
// OTEL_EXPORTER_OTLP_ENDPOINT set it sends traces of its workflows and
// activities over OTLP (see package worker/telemetry).
//
// It talks to a server on loopback without gRPC compression and to any
// other with the SDK's gzip; TODOFLOW_GRPC_COMPRESSION (gzip, none, auto)
// overrides that (see agentworker.Compression).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/todoflow/todoflow/worker/agentworker"
	"github.com/todoflow/todoflow/worker/codec"
	"github.com/todoflow/todoflow/worker/devserver"
	"github.com/todoflow/todoflow/worker/telemetry"
	"github.com/todoflow/todoflow/workflows"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "worker: %v\n", err)
		var ue usageError
		if errors.As(err, &ue) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

type usageError struct{ error }

func run() error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	address := fs.String("address", "", "Temporal server `HOST:PORT` (default: $TEMPORAL_ADDRESS or the active profile, else localhost:7233)")
	namespace := fs.String("namespace", "", "Temporal namespace (default: $TEMPORAL_NAMESPACE or the active profile, else default)")
	taskQueue := fs.String("task-queue", workflows.TaskQueue, "task queue to poll")
	dev := fs.Bool("dev", false, "start the embedded Temporal dev server first (ports 7233 and 8233, persistent SQLite)")
	codecAddr := fs.String("codec-addr", "", "serve the codec server the Web UI decrypts payloads with on `HOST:PORT` (needs $TODOFLOW_PAYLOAD_KEY)")
	codecOrigins := fs.String("codec-origins", strings.Join(codec.DefaultOrigins, ","), "Web UI `ORIGINS` (comma-separated) allowed to call the codec server")
	hostQueue := fs.String("host-queue", "", "the task queue of this worker's workspaces, polled for their sessions' tool calls (default $"+agentworker.EnvHostQueue+", else the name kept in the state folder)")
	mcpConfig := fs.String("mcp-config", "", "MCP servers whose tools the models may use: a JSON `FILE` of \"mcpServers\" (default $TODOFLOW_MCP_CONFIG)")
	metricsAddr := fs.String("metrics-addr", "", "serve Prometheus metrics (the SDK's and todoflow's) on `HOST:PORT` at /metrics (default $"+telemetry.EnvMetricsAddr+")")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}

	if *metricsAddr == "" {
		*metricsAddr = os.Getenv(telemetry.EnvMetricsAddr)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// Tracing stops last, after the worker and the client, so that it
	// sends their last spans.
	tracing, err := telemetry.StartTracing(ctx, "todoflow-worker")
	if err != nil {
		return err
	}
	if tracing != nil {
		defer func() {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			if err := tracing.Shutdown(sctx); err != nil {
				fmt.Fprintf(os.Stderr, "worker: %v\n", err)
			}
		}()
		fmt.Fprintf(os.Stderr, "worker: tracing: %s\n", tracing)
	}
	var metrics client.MetricsHandler
	if *metricsAddr != "" {
		m, at, shutdown, err := serveMetrics(ctx, *metricsAddr)
		if err != nil {
			return err
		}
		defer shutdown()
		fmt.Fprintf(os.Stderr, "worker: metrics at http://%s/metrics\n", at)
		metrics = m.MetricsHandler()
	}

	if *codecAddr != "" {
		shutdown, err := serveCodec(ctx, *codecAddr, strings.Split(*codecOrigins, ","))
		if err != nil {
			return err
		}
		defer shutdown()
	}

	if *dev {
		if *address != "" {
			return usageError{errors.New("--dev starts its own server on localhost:7233; drop --address")}
		}
		if *namespace == "" {
			*namespace = client.DefaultNamespace
		}
		db, err := agentworker.ServerDB()
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "worker: starting the embedded Temporal server (database %s)\n", db)
		srv, err := devserver.Start(ctx, devserver.Options{
			Port:             7233,
			UIPort:           8233,
			DBFile:           db,
			Namespace:        *namespace,
			SearchAttributes: workflows.SearchAttributes(),
			Progress:         os.Stderr,
		})
		if errors.Is(err, devserver.ErrDBInUse) {
			return fmt.Errorf("start the embedded Temporal server: %w (stop it, or give this worker another state folder with TODOFLOW_STATE_DIR)", err)
		}
		if err != nil {
			return fmt.Errorf("start the embedded Temporal server: %w", err)
		}
		defer srv.Stop()
		*address = srv.Address()
		fmt.Fprintf(os.Stderr, "worker: Temporal at %s, Web UI at http://%s\n", srv.Address(), srv.UIAddress())
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	c, ns, err := agentworker.DialWith(ctx, agentworker.DialOptions{
		Address: *address, Namespace: *namespace, Local: *dev, Logger: sdklog.NewStructuredLogger(logger),
		MetricsHandler: metrics, Interceptors: tracing.Interceptors(),
	})
	if err != nil {
		return err
	}
	defer c.Close()
	return agentworker.Run(ctx, c, ns, agentworker.Options{TaskQueue: *taskQueue, HostQueue: *hostQueue, MCPConfig: *mcpConfig, Logger: logger})
}

// serveCodec serves the codec server on addr until the worker stops.
func serveCodec(ctx context.Context, addr string, origins []string) (shutdown func(), err error) {
	sealer, err := codec.FromEnv()
	if err != nil {
		return nil, err
	}
	if sealer == nil {
		return nil, usageError{fmt.Errorf("--codec-addr serves the keys of %s, which is not set", codec.EnvKey)}
	}
	at, shutdown, err := serveHTTP(ctx, addr, codec.Handler(sealer, origins))
	if err != nil {
		return nil, fmt.Errorf("codec server: %w", err)
	}
	fmt.Fprintf(os.Stderr, "worker: codec server at http://%s (key %s); set it as the Web UI's codec endpoint\n", at, sealer.KeyID())
	return shutdown, nil
}

// serveMetrics serves new metrics on addr, at /metrics, until shutdown;
// the worker's client reports to m's handler. at is the address served.
func serveMetrics(ctx context.Context, addr string) (m *telemetry.Metrics, at net.Addr, shutdown func(), err error) {
	m, err = telemetry.NewMetrics()
	if err != nil {
		return nil, nil, nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.HTTPHandler())
	at, stop, err := serveHTTP(ctx, addr, mux)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("metrics server (--metrics-addr): %w", err)
	}
	return m, at, func() {
		stop()
		_ = m.Shutdown(context.WithoutCancel(ctx))
	}, nil
}

// serveHTTP serves handler on addr until shutdown is called; at is the
// address it listens on (the port chosen, for addr's port 0).
func serveHTTP(ctx context.Context, addr string, handler http.Handler) (at net.Addr, shutdown func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return ln.Addr(), func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}, nil
}
