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
// It serves the text of the model calls it runs, as the model writes it,
// to the clients that watch their sessions: on a free port of 127.0.0.1,
// or --stream-addr (TODOFLOW_STREAM_ADDR; off serves none), reached at
// --stream-url when not at the address listened on, over TLS with
// --stream-cert and --stream-key (package internal/replystream).
//
// With --metrics-addr (or TODOFLOW_METRICS_ADDR; a port alone binds
// 127.0.0.1) it serves Prometheus metrics, the SDK's and todoflow's own, at
// /metrics; with --codec-addr, the codec server the Web UI and the temporal
// CLI decrypt payloads through, to callers that send the bearer token in
// TODOFLOW_CODEC_TOKEN (see serveCodec); with OpenTelemetry's
// OTEL_EXPORTER_OTLP_ENDPOINT set it sends traces of its workflows and
// activities over OTLP (see package worker/telemetry).
//
// What a run's input or its model may reach is the operator's to allow
// (SECURITY.md): --workspace-root (the folders a run's workspace may be
// in), --allow-vcs-writes, --script-dir (scripted models, for tests and
// demos), --subagent-model (the models a model may choose for a subagent).
// With --deployment and --build-id the worker is a version of a worker
// deployment, and the sessions it starts are pinned to it (docs/protocol.md,
// "Versions and upgrades").
//
// It talks to a server on loopback without gRPC compression and to any
// other with the SDK's gzip; TODOFLOW_GRPC_COMPRESSION (gzip, none, auto)
// overrides that (see agentworker.Compression).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/todoflow/todoflow/api"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/internal/cliflags"
	"github.com/todoflow/todoflow/internal/replystream"
	"github.com/todoflow/todoflow/worker/agentworker"
	"github.com/todoflow/todoflow/worker/codec"
	"github.com/todoflow/todoflow/worker/devserver"
	"github.com/todoflow/todoflow/worker/telemetry"
)

func main() {
	os.Exit(runCLI(os.Args[1:], os.Stdout, os.Stderr))
}

// usageError is a refusal of the command line's settings: exit code 2.
type usageError struct{ error }

// flags are the worker's command line.
type flags struct {
	address, namespace, taskQueue, hostQueue string
	dev, vcsWrites, codecInsecure            bool
	codecAddr, codecOrigins, codecHosts      string
	roots, subagentModels                    []string
	scriptDir, mcpConfig, deployment         string
	buildID, metricsAddr                     string
	streamAddr, streamURL                    string
	streamCert, streamKey                    string
}

// runCLI runs the worker with the command line args and returns its exit code: 0 after an
// interrupt (or -h), 1 when it fails, 2 for a bad command line, which cobra refuses with
// one line and the usage.
func runCLI(args []string, stdout, stderr io.Writer) int {
	var f flags
	started := false
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "run todoflow's AgentWorkflow and activities (--dev: on the embedded Temporal server)",
		Example: `  worker --dev
  worker --dev --script-dir testsuite/testdata/scenarios
  worker --address my-ns.a1b2c.tmprl.cloud:7233 --namespace my-ns.a1b2c`,
		Args:          cobra.NoArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(*cobra.Command, []string) error {
			started = true
			return run(f)
		},
	}
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	fs := cmd.Flags()
	fs.StringVar(&f.address, "address", "", "Temporal server `HOST:PORT` (default: $TEMPORAL_ADDRESS or the active profile, else localhost:7233)")
	fs.StringVar(&f.namespace, "namespace", "", "Temporal namespace `NS` (default: $TEMPORAL_NAMESPACE or the active profile, else default)")
	fs.StringVar(&f.taskQueue, "task-queue", api.TaskQueue, "task `QUEUE` to poll")
	fs.BoolVar(&f.dev, "dev", false, "start the embedded Temporal dev server first (ports 7233 and 8233, persistent SQLite)")
	fs.StringVar(&f.codecAddr, "codec-addr", "", "serve the codec server the Web UI decrypts payloads with on `HOST:PORT` (a PORT alone: 127.0.0.1); callers send $"+codec.EnvToken+" as a bearer token (needs $"+codec.EnvKey+")")
	fs.StringVar(&f.codecOrigins, "codec-origins", strings.Join(codec.DefaultOrigins, ","), "Web UI `ORIGINS` (comma-separated) allowed to call the codec server")
	fs.StringVar(&f.codecHosts, "codec-hosts", "", "further host `NAMES` (comma-separated) callers reach the codec server by, such as a proxy's; its address and localhost are always accepted")
	fs.BoolVar(&f.codecInsecure, "codec-insecure-loopback", false, "serve the codec server without $"+codec.EnvToken+", on a loopback address only: every local process and user can then decrypt (for the dev server's Web UI, which sends no token)")
	fs.StringVar(&f.hostQueue, "host-queue", "", "the task `QUEUE` of this worker's workspaces, polled for their sessions' tool calls (default $"+agentworker.EnvHostQueue+", else the name kept in the state folder)")
	fs.StringArrayVar(&f.roots, "workspace-root", nil, "an absolute `DIR` that runs' workspaces may be inside; repeat for more (default $"+activities.EnvWorkspaceRoots+", else <state folder>/workspaces)")
	fs.StringArrayVar(&f.subagentModels, "subagent-model", nil, "a model `PATTERN` (path.Match of a reference, e.g. openai:gpt-4o-mini) a model may choose for its subagents besides its own; repeat for more (default $"+activities.EnvSubagentModels+", else none)")
	fs.BoolVar(&f.vcsWrites, "allow-vcs-writes", false, "let write_file write inside .git and other version control metadata (default $"+agentworker.EnvVCSWrites+")")
	fs.StringVar(&f.scriptDir, "script-dir", "", "serve script: models (scenario files) from the files inside `DIR`, for tests and demos (default $"+agentworker.EnvScriptDir+", else none)")
	fs.StringVar(&f.mcpConfig, "mcp-config", "", "MCP servers whose tools the models may use: a JSON `FILE` of \"mcpServers\" (default $TODOFLOW_MCP_CONFIG)")
	fs.StringVar(&f.deployment, "deployment", "", "run as a version of this worker deployment `NAME` (Worker Versioning; with --build-id): sessions are pinned to the build that starts them (default $"+agentworker.EnvDeployment+")")
	fs.StringVar(&f.buildID, "build-id", "", "this worker's build `ID` in its --deployment (default $"+agentworker.EnvBuildID+")")
	fs.StringVar(&f.streamAddr, "stream-addr", "", "serve the replies of running model calls to watching clients on `HOST:PORT` (a PORT alone: 127.0.0.1; off: none, clients then see replies every few seconds; default $"+agentworker.EnvStreamAddr+", else a free port on 127.0.0.1)")
	fs.StringVar(&f.streamURL, "stream-url", "", "the address clients reach --stream-addr at, as `http://HOST:PORT` (https:// with --stream-cert), when not the one listened on (default $"+agentworker.EnvStreamURL+")")
	fs.StringVar(&f.streamCert, "stream-cert", "", "serve the reply streams over TLS with the certificate of this PEM `FILE` (with --stream-key; default $"+agentworker.EnvStreamCert+"); clients trust it through the system's authorities or the file $"+replystream.EnvCA+" names")
	fs.StringVar(&f.streamKey, "stream-key", "", "the PEM `FILE` of --stream-cert's key (default $"+agentworker.EnvStreamKey+")")
	fs.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus metrics (the SDK's and todoflow's) on `HOST:PORT` at /metrics; a PORT alone (:9090) binds 127.0.0.1, 0.0.0.0:PORT every interface (default $"+telemetry.EnvMetricsAddr+")")
	cmd.InitDefaultHelpFlag() // now, for LongFlags to know -help
	// Never nil: cobra would read os.Args then.
	cmd.SetArgs(append([]string{}, cliflags.LongFlags(fs, args)...))
	err := cmd.Execute()
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "worker: %v\n", err)
	var ue usageError
	switch {
	case !started: // cobra's refusal of the command line
		fmt.Fprint(stderr, cmd.UsageString())
		return 2
	case errors.As(err, &ue):
		return 2
	}
	return 1
}

func run(f flags) error {
	if f.metricsAddr == "" {
		f.metricsAddr = os.Getenv(telemetry.EnvMetricsAddr)
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
	if f.metricsAddr != "" {
		m, at, shutdown, err := serveMetrics(ctx, f.metricsAddr)
		if err != nil {
			return err
		}
		defer shutdown()
		fmt.Fprintf(os.Stderr, "worker: metrics at http://%s/metrics\n", at)
		metrics = m.MetricsHandler()
	}

	if f.codecAddr != "" {
		_, shutdown, err := serveCodec(ctx, codecFlags{
			addr: f.codecAddr, origins: commaList(f.codecOrigins), hosts: commaList(f.codecHosts), insecureLoopback: f.codecInsecure,
		})
		if err != nil {
			return err
		}
		defer shutdown()
	}

	if f.dev {
		if f.address != "" {
			return usageError{errors.New("--dev starts its own server on localhost:7233; drop --address")}
		}
		if f.namespace == "" {
			f.namespace = client.DefaultNamespace
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
			Namespace:        f.namespace,
			SearchAttributes: api.SearchAttributes(),
			Progress:         os.Stderr,
		})
		if errors.Is(err, devserver.ErrDBInUse) {
			return fmt.Errorf("start the embedded Temporal server: %w (stop it, or give this worker another state folder with TODOFLOW_STATE_DIR)", err)
		}
		if err != nil {
			return fmt.Errorf("start the embedded Temporal server: %w", err)
		}
		defer srv.Stop()
		f.address = srv.Address()
		fmt.Fprintf(os.Stderr, "worker: Temporal at %s, Web UI at http://%s\n", srv.Address(), srv.UIAddress())
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	c, ns, err := agentworker.DialWith(ctx, agentworker.DialOptions{
		Address: f.address, Namespace: f.namespace, Local: f.dev, Logger: sdklog.NewStructuredLogger(logger),
		MetricsHandler: metrics, Interceptors: tracing.Interceptors(),
	})
	if err != nil {
		return err
	}
	defer c.Close()
	return agentworker.Run(ctx, c, ns, agentworker.Options{
		TaskQueue: f.taskQueue, HostQueue: f.hostQueue, MCPConfig: f.mcpConfig, Logger: logger,
		WorkspaceRoots: f.roots, SubagentModels: f.subagentModels, VCSWrites: f.vcsWrites, ScriptDir: f.scriptDir,
		Deployment: f.deployment, BuildID: f.buildID, StreamAddr: f.streamAddr, StreamURL: f.streamURL, StreamCert: f.streamCert, StreamKey: f.streamKey,
	})
}

// codecFlags are the codec server's settings from the command line; its
// token is read from the environment (codec.EnvToken).
type codecFlags struct {
	addr             string
	origins, hosts   []string
	insecureLoopback bool
}

// minCodecToken is the shortest codec token accepted: nothing limits how
// many guesses a caller makes.
const minCodecToken = 16

// serveCodec serves the codec server until the worker stops. It holds the
// payload keys, so every caller must send codec.EnvToken. Without a token it
// serves a loopback address only, and only with --codec-insecure-loopback:
// loopback is not the worker's own (every local user, and in a pod every
// container, shares it), so an open codec server is the operator's choice,
// not a default. The refusals are usage errors (exit code 2). at is the
// address served.
func serveCodec(ctx context.Context, f codecFlags) (at net.Addr, shutdown func(), err error) {
	sealer, err := codec.FromEnv()
	if err != nil {
		return nil, nil, err
	}
	if sealer == nil {
		return nil, nil, usageError{fmt.Errorf("--codec-addr serves the keys of %s, which is not set", codec.EnvKey)}
	}
	token := strings.TrimSpace(os.Getenv(codec.EnvToken))
	switch {
	case token == "" && !f.insecureLoopback:
		return nil, nil, usageError{fmt.Errorf("--codec-addr: the codec server decrypts for whoever calls it: set %s to a secret its callers send as \"Authorization: Bearer <token>\" (make one with: head -c 32 /dev/urandom | base64), or serve a loopback address without one with --codec-insecure-loopback", codec.EnvToken)}
	case token != "" && len(token) < minCodecToken:
		return nil, nil, usageError{fmt.Errorf("%s is %d characters long, want at least %d (make one with: head -c 32 /dev/urandom | base64)", codec.EnvToken, len(token), minCodecToken)}
	}
	ln, err := listen(f.addr)
	if err != nil {
		return nil, nil, fmt.Errorf("codec server (--codec-addr): %w", err)
	}
	// The address bound, not the one written, says whether it is loopback:
	// a name may resolve anywhere. Nothing is served before this check.
	bound := ln.Addr().(*net.TCPAddr)
	if token == "" && !bound.IP.IsLoopback() {
		_ = ln.Close()
		return nil, nil, usageError{fmt.Errorf("--codec-addr %s binds %s, not a loopback address, and %s is not set: the codec server would decrypt for anyone who reaches it (--codec-insecure-loopback serves loopback addresses only)", f.addr, bound, codec.EnvToken)}
	}
	hosts := append([]string{bound.IP.String()}, f.hosts...)
	if h, _, _ := net.SplitHostPort(f.addr); h != "" {
		hosts = append(hosts, h)
	}
	stop := serveHTTP(ctx, ln, codec.Handler(sealer, codec.Options{Origins: f.origins, Token: token, Hosts: hosts}))
	if token == "" {
		fmt.Fprintf(os.Stderr, "worker: WARNING: codec server at http://%s without authentication (--codec-insecure-loopback): every process on this machine can decrypt with key %s\n", bound, sealer.KeyID())
	} else {
		fmt.Fprintf(os.Stderr, "worker: codec server at http://%s (key %s); callers send $%s as a bearer token\n", bound, sealer.KeyID(), codec.EnvToken)
	}
	return bound, stop, nil
}

// serveMetrics serves new metrics on addr (127.0.0.1 for a port alone), at
// /metrics, until shutdown; the worker's client reports to m's handler. at
// is the address served.
func serveMetrics(ctx context.Context, addr string) (m *telemetry.Metrics, at net.Addr, shutdown func(), err error) {
	m, err = telemetry.NewMetrics()
	if err != nil {
		return nil, nil, nil, err
	}
	ln, err := listen(addr)
	if err != nil {
		_ = m.Shutdown(context.WithoutCancel(ctx))
		return nil, nil, nil, fmt.Errorf("metrics server (--metrics-addr): %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.HTTPHandler())
	stop := serveHTTP(ctx, ln, mux)
	return m, ln.Addr(), func() {
		stop()
		_ = m.Shutdown(context.WithoutCancel(ctx))
	}, nil
}

// listen listens on addr. An address with a port alone (":9090") listens on
// 127.0.0.1, not on every interface as Go would: the codec and metrics
// servers answer whoever reaches them, so exposing them should be written
// out ("0.0.0.0:9090").
func listen(addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.Listen("tcp", net.JoinHostPort(host, port))
}

// Timeouts of the codec and metrics servers, so that a caller who sends
// or reads slowly, or keeps idle connections, does not hold a connection
// (and its goroutine) for ever. A request is at most codec.MaxBodyBytes,
// and the answer about as much, over a local network.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = 2 * time.Minute
)

// httpServer is the server of handler, with the timeouts above.
func httpServer(handler http.Handler) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
	}
}

// serveHTTP serves handler on ln until shutdown is called.
func serveHTTP(ctx context.Context, ln net.Listener, handler http.Handler) (shutdown func()) {
	srv := httpServer(handler)
	go func() { _ = srv.Serve(ln) }()
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}
}

// commaList is the non-empty items of a comma-separated flag.
func commaList(s string) []string {
	var items []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	return items
}
