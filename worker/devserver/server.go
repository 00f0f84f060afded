package devserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
)

// Options configures [Start]. The zero value is a throwaway server on free ports with the
// Web UI on, a temporary database and the "default" namespace.
type Options struct {
	Port   int // the frontend's gRPC port on 127.0.0.1; 0 picks a free one
	UIPort int // the Web UI's port; 0 picks a free one, -1 turns the UI off
	// DBFile is the SQLite file that keeps the server's state across restarts; its folder
	// is created. "" is a temporary one, removed by Stop. A file in use fails with [ErrDBInUse].
	DBFile    string
	Namespace string // created when missing; "" means "default"
	// SearchAttributes maps names to types ("Int", "Keyword", "KeywordList"…): registered at
	// launch, and added once the server is up to a database created without them.
	SearchAttributes map[string]string
	// DynamicConfig adds "key=JSON value" settings after the built-in ones (a later value
	// wins), e.g. "limit.historyCount.suggestContinueAsNew=40".
	DynamicConfig []string
	Log           io.Writer // the server's output; nil discards it (errors still quote its last lines)
	Progress      io.Writer // notes on finding or building the binary ([BinaryPath]); nil discards them
	Binary        string    // the temporal CLI to run; "" means [BinaryPath]
}

// ErrPortInUse is wrapped by Start's error when a port it needs is taken, most likely by
// another Temporal server (`worker --dev` already running).
var ErrPortInUse = errors.New("port in use")

const (
	host         = "127.0.0.1"
	readyTimeout = 60 * time.Second
	tailLines    = 50
)

// stopGrace is how long Stop waits after SIGTERM before SIGKILL; a variable for tests.
var stopGrace = 10 * time.Second

// dynamicConfig are the server settings measured to matter here (docs/architecture.md,
// Performance). Values are JSON.
var dynamicConfig = []string{
	// The default 20 polls/s of history transfer tasks adds ~100 ms to every activity.
	"history.transferProcessorMaxPollRPS=1000",
	// One partition: with the default four, a task can wait in a partition no poller is on.
	"matching.numTaskqueueReadPartitions=1",
	"matching.numTaskqueueWritePartitions=1",
	// Eager activities (the SDK asks, the server's default refuses): ~2 ms less per
	// activity (BENCHMARKS.md).
	"system.enableActivityEagerExecution=true",
}

// sqlitePragmas make SQLite commit without an fsync per write (WAL keeps it crash-safe).
var sqlitePragmas = []string{"journal_mode=wal", "synchronous=normal"}

// Server is a running dev server child process.
type Server struct {
	cmd                   *exec.Cmd
	addr, uiAddr, metrics string
	namespace             string
	tempDir               string // removed by Stop; "" when the caller chose the database file
	throwaway             bool   // the database is temporary: nothing to shut down gently for
	unlockDB              func() // releases the caller's database file; nil for a temporary one
	log                   *tail
	done                  chan struct{} // closed when the process has exited
	exitErr               error         // cmd.Wait's result, readable after done
	stopOnce              sync.Once
	stopErr               error
}

// Address is the frontend's host:port, for client.Options.HostPort.
func (s *Server) Address() string { return s.addr }

// UIAddress is the Web UI's host:port, or "" when the UI is off.
func (s *Server) UIAddress() string { return s.uiAddr }

// MetricsAddress is the host:port of the server's Prometheus metrics, at /metrics (its
// `action` counter is what Temporal Cloud bills).
func (s *Server) MetricsAddress() string { return s.metrics }

// Namespace is the namespace the server was started with.
func (s *Server) Namespace() string { return s.namespace }

// PID is the server process's id, for a caller that measures what it costs.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Start runs `temporal server start-dev` as a child process and returns once it is healthy
// and its namespace and search attributes are in place. ctx bounds the startup (at most
// 60 s of it waiting for health), not the server's life: call Stop.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.Namespace == "" {
		opts.Namespace = "default"
	}
	for name, typ := range opts.SearchAttributes {
		if _, err := parseType(typ); err != nil {
			return nil, fmt.Errorf("search attribute %q: %w", name, err)
		}
	}
	// The database first: a file in use fails before a binary is looked for (or built).
	var tempDir string
	var unlock func()
	defer func() { // unless the server took them over
		if unlock != nil {
			unlock()
		}
		if tempDir != "" {
			_ = os.RemoveAll(tempDir)
		}
	}()
	if opts.DBFile == "" {
		var err error
		if tempDir, err = os.MkdirTemp("", "todoflow-temporal-*"); err != nil {
			return nil, fmt.Errorf("creating a folder for the dev server's database: %w", err)
		}
		// A folder: SQLite in WAL mode adds -wal and -shm files beside the database.
		opts.DBFile = filepath.Join(tempDir, "temporal.db")
	} else {
		db, err := filepath.Abs(opts.DBFile)
		if err == nil {
			err = os.MkdirAll(filepath.Dir(db), 0o755)
		}
		if err != nil {
			return nil, fmt.Errorf("dev server database %q: %w", opts.DBFile, err)
		}
		if unlock, err = lockDB(db); err != nil {
			return nil, err
		}
		opts.DBFile = db
	}

	if opts.Binary == "" {
		var err error
		if opts.Binary, err = BinaryPath(ctx, opts.Progress); err != nil {
			return nil, err
		}
	}
	for _, p := range []int{opts.Port, opts.UIPort} {
		if p > 0 {
			if err := checkPortFree(p); err != nil {
				return nil, err
			}
		}
	}
	// Free ports are picked by binding and releasing them, so another process can take one
	// before the server binds it: ours, and the CLI's own for the services inside the server
	// (it does not check those before use). Such a lost race is retried with fresh ports.
	for attempt := 1; ; attempt++ {
		s, err := startOnce(ctx, opts, tempDir != "")
		if err == nil {
			s.tempDir, s.unlockDB = tempDir, unlock
			tempDir, unlock = "", nil
			return s, nil
		}
		if attempt == 3 || !errors.Is(err, ErrPortInUse) || ctx.Err() != nil {
			return nil, err
		}
	}
}

// flagArgs builds the `temporal server start-dev` arguments of opts, whose ports and
// database are settled. --namespace is passed even for "default": a value on the command
// line wins over one in the user's ~/.config/temporalio/temporal.yaml.
func flagArgs(opts Options, metricsPort int) []string {
	args := []string{"server", "start-dev", "--ip", host, "--port", strconv.Itoa(opts.Port)}
	if opts.UIPort < 0 {
		args = append(args, "--headless")
	} else {
		args = append(args, "--ui-port", strconv.Itoa(opts.UIPort))
	}
	args = append(args, "--metrics-port", strconv.Itoa(metricsPort),
		"--db-filename", opts.DBFile, "--namespace", opts.Namespace, "--log-level", "warn")
	for _, name := range slices.Sorted(maps.Keys(opts.SearchAttributes)) {
		t, _ := parseType(opts.SearchAttributes[name]) // Start checked them
		args = append(args, "--search-attribute", name+"="+t.String())
	}
	for _, kv := range slices.Concat(dynamicConfig, opts.DynamicConfig) {
		args = append(args, "--dynamic-config-value", kv)
	}
	for _, kv := range sqlitePragmas {
		args = append(args, "--sqlite-pragma", kv)
	}
	return args
}

// startOnce launches the process itself rather than through testsuite.StartDevServer, whose
// *exec.Cmd is private: it needs its own environment, process group, parent-death signal,
// pid and output (doc.go).
func startOnce(ctx context.Context, opts Options, throwaway bool) (*Server, error) {
	// The CLI serves metrics whether asked or not, on a random port: a port is chosen to be known.
	metricsPort := 0
	free, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	for i, p := range []*int{&opts.Port, &opts.UIPort, &metricsPort} {
		if *p == 0 {
			*p = free[i]
		}
	}
	s := &Server{
		cmd:       exec.Command(opts.Binary, flagArgs(opts, metricsPort)...),
		addr:      net.JoinHostPort(host, strconv.Itoa(opts.Port)),
		metrics:   net.JoinHostPort(host, strconv.Itoa(metricsPort)),
		namespace: opts.Namespace,
		throwaway: throwaway,
		log:       newTail(tailLines),
		done:      make(chan struct{}),
	}
	if opts.UIPort > 0 {
		s.uiAddr = net.JoinHostPort(host, strconv.Itoa(opts.UIPort))
	}
	s.log.copyTo = opts.Log
	// One writer for both streams: os/exec then uses a single pipe, keeping their order.
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	s.cmd.SysProcAttr = procAttr()
	s.cmd.Env = serverEnv(os.Environ())
	if err := s.run(); err != nil {
		return nil, fmt.Errorf("starting the Temporal dev server %s: %w", opts.Binary, err)
	}
	if err := s.waitReady(ctx, opts.SearchAttributes); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

// run starts the child and reaps it in the background.
func (s *Server) run() error {
	started := make(chan error, 1)
	go func() {
		// Pdeathsig fires when the OS thread that forked the child exits, not our process,
		// and the Go runtime retires threads: so the goroutine that starts the child stays
		// locked to its thread, blocked in Wait, for the child's whole life.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := s.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		s.exitErr = s.cmd.Wait()
		close(s.done)
	}()
	return <-started
}

// waitReady returns once the frontend passes the gRPC health check, the namespace can be
// described and the search attributes are registered; early if the process dies.
func (s *Server) waitReady(ctx context.Context, attrs map[string]string) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	start := time.Now()
	for {
		c, err := s.probe(ctx)
		if err == nil {
			err = EnsureSearchAttributes(ctx, c, s.namespace, attrs)
			c.Close()
			if err != nil {
				return fmt.Errorf("the Temporal dev server at %s: %w", s.addr, err)
			}
			return nil
		}
		select {
		case <-s.done:
			return s.earlyExit()
		case <-ctx.Done():
			return fmt.Errorf("the Temporal dev server at %s was not ready after %s (%w); last check: %v; its last output:\n%s",
				s.addr, since(start), ctx.Err(), err, indent(s.log.String()))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// probe returns a connected client when the server is ready for work.
func (s *Server) probe(ctx context.Context) (client.Client, error) {
	// A TCP connect first: a client dialled before the port listens backs off, slowing the start.
	conn, err := net.DialTimeout("tcp", s.addr, time.Second)
	if err != nil {
		return nil, err
	}
	_ = conn.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{HostPort: s.addr, Namespace: s.namespace,
		Logger: sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))}) // failed probes are expected
	if err != nil {
		return nil, err
	}
	if _, err = c.CheckHealth(ctx, &client.CheckHealthRequest{}); err == nil {
		if _, err = c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: s.namespace}); err != nil {
			err = fmt.Errorf("namespace %q: %w", s.namespace, err)
		}
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// earlyExit explains a process that died during startup.
func (s *Server) earlyExit() error {
	out := s.log.String()
	err := fmt.Errorf("the Temporal dev server (%s) exited during startup (%v); its last output:\n%s",
		strings.Join(s.cmd.Args, " "), s.exitErr, indent(out))
	if strings.Contains(out, "address already in use") || (strings.Contains(out, "can't set") && strings.Contains(out, "port")) {
		return fmt.Errorf("%w: %w", ErrPortInUse, err)
	}
	return err
}

// Stop terminates the server: SIGTERM to its process group, SIGKILL after 10 s (at once
// for a temporary database, which is then removed: a graceful shutdown only protects the
// database). Calling it again returns the first result.
func (s *Server) Stop() error { return s.stop(!s.throwaway) }

// Kill ends the server at once with SIGKILL to its process group, as a crash or the OOM
// killer would. What SQLite had committed survives, so a server started again on the same
// DBFile (and Port) carries on. Calling Kill or Stop again returns the first result.
func (s *Server) Kill() error { return s.stop(false) }

func (s *Server) stop(graceful bool) error {
	s.stopOnce.Do(func() {
		s.stopErr = s.terminate(graceful)
		// The lock only once the process is gone: one that survived SIGKILL has the file open.
		if s.unlockDB != nil && s.stopErr == nil {
			s.unlockDB()
		}
		if s.tempDir != "" {
			if err := os.RemoveAll(s.tempDir); err != nil && s.stopErr == nil {
				s.stopErr = fmt.Errorf("removing the dev server's temporary database: %w", err)
			}
		}
	})
	return s.stopErr
}

// terminate signals the process group (the negative pid), catching anything it spawned.
func (s *Server) terminate(graceful bool) error {
	select {
	case <-s.done:
		return nil
	default:
	}
	pid := s.cmd.Process.Pid
	if graceful {
		_ = syscall.Kill(-pid, syscall.SIGTERM)
		select {
		case <-s.done:
			return nil
		case <-time.After(stopGrace):
		}
		fmt.Fprintf(s.log, "todoflow: the dev server ignored SIGTERM for %s; killing it\n", stopGrace)
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	select {
	case <-s.done:
		return nil
	case <-time.After(5 * time.Second):
		return fmt.Errorf("the Temporal dev server (pid %d) survived SIGKILL", pid)
	}
}

// checkPortFree fails with ErrPortInUse when port cannot be bound on 127.0.0.1, before
// a child is spawned only to say the same less clearly.
func checkPortFree(port int) error {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("%w: %s:%d cannot be bound (is another Temporal server, e.g. `worker --dev`, running?): %w",
			ErrPortInUse, host, port, err)
	}
	return ln.Close()
}

// freePorts returns n distinct ports that were free a moment ago: the listeners stay open
// until all are picked, so the kernel cannot hand out one twice.
func freePorts(n int) ([]int, error) {
	ports := make([]int, n)
	for i := range ports {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		defer ln.Close()
		ports[i] = ln.Addr().(*net.TCPAddr).Port
	}
	return ports, nil
}

// indent sets a child's output off from our own message.
func indent(s string) string {
	if s == "" {
		return "    (no output)"
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// serverEnv keeps of env what a program needs to run (where it is, who runs it, its
// temporary files, time zone and locale) and the Go runtime's settings. The rest holds
// secrets the server has no use for (docs/operations.md), and OpenTelemetry settings meant
// for the worker that the server would act on (OTEL_TRACES_EXPORTER with a protocol other
// than grpc stops it from starting). Everything the server needs is in flagArgs.
func serverEnv(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "PATH", "HOME", "USER", "LOGNAME", "TMPDIR", "TZ", "LANG", "XDG_CONFIG_HOME",
			"GODEBUG", "GOGC", "GOMAXPROCS", "GOMEMLIMIT", "GOTRACEBACK":
			return false
		}
		return !strings.HasPrefix(name, "LC_")
	})
}
