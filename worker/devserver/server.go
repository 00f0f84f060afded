package devserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
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
	// Port is the frontend gRPC port on 127.0.0.1; 0 picks a free one.
	Port int
	// UIPort is the Web UI port; 0 picks a free one, -1 turns the UI off.
	UIPort int
	// MetricsPort is the port of the server's Prometheus metrics (/metrics
	// on 127.0.0.1; its `action` counter is what Temporal Cloud bills); 0
	// picks a free one. The CLI serves them whether asked or not, on a
	// random port, so a port is always chosen here to be known.
	MetricsPort int
	// DBFile is the SQLite file that keeps the server's state across restarts. Its folder
	// is created when missing. "" uses a fresh temporary file, removed by Stop. A file
	// that another server uses fails Start with [ErrDBInUse].
	DBFile string
	// Namespace is created at launch when missing; "" means "default".
	Namespace string
	// SearchAttributes maps attribute names to types ("Int", "Keyword", "Text", "Bool",
	// "Double", "Datetime", "KeywordList"). They are registered at launch and, for a
	// database created by an older version, added once the server is up.
	SearchAttributes map[string]string
	// Log receives the server's output; nil discards it (the last lines are still kept
	// for error messages).
	Log io.Writer
	// Progress receives notes about building the binary (see [BinaryPath]); nil discards them.
	Progress io.Writer
	// Binary is the temporal CLI to run; "" means [BinaryPath].
	Binary string
	// DynamicConfig adds "key=JSON value" server settings after the built-in ones (a later
	// value wins), e.g. "limit.historyCount.suggestContinueAsNew=40" for a test that
	// needs continue-as-new without thousands of events.
	DynamicConfig []string
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

// dynamicConfig are the server settings measured to matter here (docs/architecture.md, Performance). Values are
// JSON, so numbers go unquoted; strings would need JSON quotes.
var dynamicConfig = []string{
	// The default 20 polls/s of history transfer tasks adds ~100 ms to every activity.
	"history.transferProcessorMaxPollRPS=1000",
	// One partition: with the default four, a task can wait in a partition no poller is on.
	"matching.numTaskqueueReadPartitions=1",
	"matching.numTaskqueueWritePartitions=1",
	// An activity scheduled by a workflow task comes back in the answer to
	// that task's completion, to the worker that completed it, instead of
	// through the task queue: about 2 ms less per activity on an idle
	// machine, more on a busy one (BENCHMARKS.md). The SDK asks for it by
	// default; the server's default is off.
	"system.enableActivityEagerExecution=true",
}

// sqlitePragmas make SQLite commit without an fsync per write (WAL keeps it crash-safe).
var sqlitePragmas = []string{"journal_mode=wal", "synchronous=normal"}

// Server is a running dev server child process.
type Server struct {
	cmd       *exec.Cmd
	addr      string
	uiAddr    string
	metrics   string
	namespace string
	tempDir   string // removed by Stop; "" when the caller chose the database file
	unlockDB  func() // releases the caller's database file once the server is gone; nil for a temporary one
	throwaway bool   // the database is temporary, so there is nothing to shut down cleanly for
	log       *tail

	done     chan struct{} // closed when the process has exited
	exitErr  error         // cmd.Wait's result, readable after done
	stopOnce sync.Once
	stopErr  error
}

// Address is the frontend's host:port, for client.Options.HostPort.
func (s *Server) Address() string { return s.addr }

// UIAddress is the Web UI's host:port, or "" when the UI is off.
func (s *Server) UIAddress() string { return s.uiAddr }

// MetricsAddress is the host:port of the server's Prometheus metrics, at
// /metrics.
func (s *Server) MetricsAddress() string { return s.metrics }

// Namespace is the namespace the server was started with.
func (s *Server) Namespace() string { return s.namespace }

// PID is the server process's id, for a caller that watches what it costs
// (CPU time, memory) from outside.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Start runs `temporal server start-dev` as a child process and returns once it is healthy
// and its namespace and search attributes are in place. ctx bounds the startup (at most
// 60 s of it are spent waiting for health), not the server's life: call Stop.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.Namespace == "" {
		opts.Namespace = "default"
	}
	// Bad types fail here, not as an obscure CLI exit.
	for name, typ := range opts.SearchAttributes {
		if _, err := parseType(typ); err != nil {
			return nil, fmt.Errorf("search attribute %q: %w", name, err)
		}
	}
	// The database first: a file in use fails at once, before a binary is looked for
	// (or built) for nothing.
	db, tempDir := opts.DBFile, ""
	var unlock func() // the database's lock, handed to the server once it runs
	started := false
	defer func() {
		if started {
			return // the server's Stop releases both
		}
		if unlock != nil {
			unlock()
		}
		if tempDir != "" {
			_ = os.RemoveAll(tempDir)
		}
	}()
	if db == "" {
		var err error
		if tempDir, err = os.MkdirTemp("", "todoflow-temporal-*"); err != nil {
			return nil, fmt.Errorf("creating a folder for the dev server's database: %w", err)
		}
		// A folder, not a file: SQLite in WAL mode adds -wal and -shm files beside it.
		db = filepath.Join(tempDir, "temporal.db")
	} else {
		var err error
		if db, err = filepath.Abs(db); err != nil {
			return nil, fmt.Errorf("dev server database %q: %w", opts.DBFile, err)
		}
		if err := os.MkdirAll(filepath.Dir(db), 0o755); err != nil {
			return nil, fmt.Errorf("creating the dev server's database folder: %w", err)
		}
		if unlock, err = lockDB(db); err != nil {
			return nil, err
		}
	}

	bin := opts.Binary
	if bin == "" {
		var err error
		if bin, err = BinaryPath(ctx, opts.Progress); err != nil {
			return nil, err
		}
	}
	for _, p := range []int{opts.Port, opts.UIPort, opts.MetricsPort} {
		if p > 0 {
			if err := checkPortFree(p); err != nil {
				return nil, err
			}
		}
	}

	// Free ports are picked by binding and releasing them, so another process can take one
	// before the server binds it: ours (when not given) and the CLI's own for the services
	// inside the server (history, matching, worker), which it does not check before use.
	// Such a lost race is retried, with fresh ports.
	for attempt := 1; ; attempt++ {
		s, err := startOnce(ctx, bin, opts, db)
		if err == nil {
			s.tempDir, s.unlockDB, started = tempDir, unlock, true
			return s, nil
		}
		if attempt < 3 && errors.Is(err, ErrPortInUse) && ctx.Err() == nil {
			continue
		}
		return nil, err
	}
}

// launch is everything that goes on the server's command line.
type launch struct {
	port, uiPort int // uiPort -1: headless
	metricsPort  int // 0: the CLI's choice
	dbFile       string
	namespace    string
	attrs        map[string]string
	dynamic      []string // extra dynamic config, after the built-in settings
}

// flagArgs builds the `temporal server start-dev` arguments. Every flag name was checked
// against `temporal server start-dev --help` of CLI v1.5.1.
func flagArgs(l launch) []string {
	args := []string{"server", "start-dev",
		"--ip", host,
		"--port", strconv.Itoa(l.port),
	}
	if l.uiPort < 0 {
		args = append(args, "--headless")
	} else {
		args = append(args, "--ui-port", strconv.Itoa(l.uiPort))
	}
	if l.metricsPort > 0 {
		args = append(args, "--metrics-port", strconv.Itoa(l.metricsPort))
	}
	// --namespace is passed even for "default" (which the server always creates, and
	// creating it twice is a no-op): a value set explicitly cannot be overridden by a
	// "namespace" entry in the user's ~/.config/temporalio/temporal.yaml.
	args = append(args,
		"--db-filename", l.dbFile,
		"--namespace", l.namespace,
		"--log-level", "warn",
	)
	names := make([]string, 0, len(l.attrs))
	for name := range l.attrs {
		names = append(names, name)
	}
	sort.Strings(names) // a deterministic command line, for logs and tests
	for _, name := range names {
		t, _ := parseType(l.attrs[name]) // Start checked them
		args = append(args, "--search-attribute", name+"="+t.String())
	}
	for _, kv := range append(slices.Clone(dynamicConfig), l.dynamic...) {
		args = append(args, "--dynamic-config-value", kv)
	}
	for _, kv := range sqlitePragmas {
		args = append(args, "--sqlite-pragma", kv)
	}
	return args
}

func startOnce(ctx context.Context, bin string, opts Options, db string) (*Server, error) {
	l := launch{port: opts.Port, uiPort: opts.UIPort, metricsPort: opts.MetricsPort, dbFile: db, namespace: opts.Namespace, attrs: opts.SearchAttributes, dynamic: opts.DynamicConfig}
	ports, err := freePorts(boolInt(l.port == 0) + boolInt(l.uiPort == 0) + boolInt(l.metricsPort == 0))
	if err != nil {
		return nil, err
	}
	for _, p := range []*int{&l.port, &l.uiPort, &l.metricsPort} {
		if *p == 0 {
			*p, ports = ports[0], ports[1:]
		}
	}

	s := &Server{
		cmd:       exec.Command(bin, flagArgs(l)...),
		addr:      net.JoinHostPort(host, strconv.Itoa(l.port)),
		metrics:   net.JoinHostPort(host, strconv.Itoa(l.metricsPort)),
		namespace: l.namespace,
		throwaway: opts.DBFile == "",
		log:       newTail(tailLines),
		done:      make(chan struct{}),
	}
	if l.uiPort > 0 {
		s.uiAddr = net.JoinHostPort(host, strconv.Itoa(l.uiPort))
	}
	s.log.copyTo = opts.Log
	// One writer for both streams: os/exec then uses a single pipe, keeping their order.
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	s.cmd.SysProcAttr = procAttr()
	s.cmd.Env = serverEnv(os.Environ())

	if err := s.run(); err != nil {
		return nil, fmt.Errorf("starting the Temporal dev server %s: %w", bin, err)
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
		// Pdeathsig (see procAttr) fires when the OS thread that forked the child exits,
		// not when our process does, and the Go runtime retires threads (any goroutine that
		// exits while locked to one takes it down). So the goroutine that starts the child
		// stays locked to its thread, blocked in Wait, for the child's whole life.
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
	var lastErr error
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
		lastErr = err
		select {
		case <-s.done:
			return s.earlyExit()
		case <-ctx.Done():
			return fmt.Errorf("the Temporal dev server at %s was not ready after %s (%w); last check: %v; its last output:\n%s",
				s.addr, since(start), ctx.Err(), lastErr, indent(s.log.String()))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// probe returns a connected client when the server is ready for work.
func (s *Server) probe(ctx context.Context) (client.Client, error) {
	// A plain TCP connect first: dialing a client at a port nobody listens on yet puts the
	// gRPC connection into reconnect backoff, which only slows the start.
	conn, err := net.DialTimeout("tcp", s.addr, time.Second)
	if err != nil {
		return nil, err
	}
	_ = conn.Close()

	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{
		HostPort:  s.addr,
		Namespace: s.namespace,
		// Failed probes are expected while the server starts; they must not spam the log.
		Logger: sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)),
	})
	if err != nil {
		return nil, err
	}
	if _, err := c.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
		c.Close()
		return nil, err
	}
	if _, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: s.namespace}); err != nil {
		c.Close()
		return nil, fmt.Errorf("namespace %q: %w", s.namespace, err)
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
// for a temporary database, which is then removed). Calling it again returns the first
// result.
func (s *Server) Stop() error { return s.stop(!s.throwaway) }

// Kill ends the server at once with SIGKILL to its process group, as a crash or the
// kernel's OOM killer would: no graceful shutdown. What SQLite had committed survives, so a
// server started again on the same DBFile (and Port) carries on where this one stopped;
// fault tests use it for that. The database's lock is released once the process is gone.
// Calling Kill or Stop again returns the first result.
func (s *Server) Kill() error { return s.stop(false) }

func (s *Server) stop(graceful bool) error {
	s.stopOnce.Do(func() {
		s.stopErr = s.terminate(graceful)
		if s.unlockDB != nil && s.stopErr == nil {
			// Only once the process is gone: a server that survived SIGKILL still has
			// the file open.
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

// terminate ends the process group: with graceful, SIGTERM first and SIGKILL after
// stopGrace; without, SIGKILL at once.
func (s *Server) terminate(graceful bool) error {
	select {
	case <-s.done:
		return nil
	default:
	}
	pid := s.cmd.Process.Pid
	// A graceful shutdown takes the server about 1.5 s and only protects the database; a
	// temporary one is deleted next, so a throwaway server (every test's) is killed at once.
	if graceful {
		// The negative pid addresses the process group (Setpgid), catching anything it spawned.
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
// a child is spawned only to say the same thing less clearly.
func checkPortFree(port int) error {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("%w: %s:%d cannot be bound (is another Temporal server, e.g. `worker --dev`, running?): %w",
			ErrPortInUse, host, port, err)
	}
	return ln.Close()
}

// freePorts returns n distinct ports that were free a moment ago. The listeners stay open
// until all are picked so the kernel cannot hand out the same port twice.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		defer ln.Close()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// indent sets a child's output off from our own message.
func indent(s string) string {
	if s == "" {
		return "    (no output)"
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// serverEnv is the environment of the server's process: the few variables
// of env a program needs to run (where it is, who runs it, where its
// temporary files go, its time zone and locale) and the Go runtime's own
// settings, nothing else. The rest of the worker's environment holds the
// model's API key, the payload key, webhook headers and MCP servers'
// credentials, which the server has no use for and whose process others
// may read (its /proc/<pid>/environ, a crash dump); and OpenTelemetry's
// settings, meant for the worker and the starter (package worker/telemetry),
// which the server would read for tracing of its own that nobody asked of an
// embedded server, and which refuses settings todoflow accepts (with
// OTEL_TRACES_EXPORTER set, a protocol other than grpc stops it from
// starting). Every setting the server needs is on its command line
// (flagArgs).
func serverEnv(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return !serverInherits(name)
	})
}

// serverInherits reports whether the server's process gets the variable
// name of the worker's environment.
func serverInherits(name string) bool {
	if runtime.GOOS == "windows" {
		switch strings.ToUpper(name) {
		case "APPDATA", "COMSPEC", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT", "PROCESSOR_ARCHITECTURE",
			"PROGRAMDATA", "PROGRAMFILES", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "TMP", "USERNAME", "USERPROFILE", "WINDIR",
			"GODEBUG", "GOGC", "GOMAXPROCS", "GOMEMLIMIT", "GOTRACEBACK":
			return true
		}
		return false
	}
	switch name {
	case "PATH", "HOME", "USER", "LOGNAME", "TMPDIR", "TZ", "LANG", "XDG_CONFIG_HOME",
		// The server is a Go program: an operator may tune its runtime.
		"GODEBUG", "GOGC", "GOMAXPROCS", "GOMEMLIMIT", "GOTRACEBACK":
		return true
	}
	return strings.HasPrefix(name, "LC_")
}
