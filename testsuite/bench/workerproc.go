package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/grpc"

	"github.com/todoflow/todoflow/worker/agentworker"
)

// The worker runs in a process of its own (this program again, with
// -role worker), so that its CPU time and memory are its own: what the
// server, the worker and the driver each cost is read from /proc. It hosts
// the todoflow worker and, on a task queue of its own, the bare baseline
// workflow, with the same SDK options: the baseline shares everything with
// the agent but the agent's own code.

const baselineQueue = "todoflow-baseline"

// workerConfig is what a worker process is started with: the levers that
// live in the worker.
type workerConfig struct {
	WorkflowPollers int  // 0: the SDK's default
	ActivityPollers int  // 0: the SDK's default
	NoEager         bool // worker.Options.DisableEagerActivities
	Autoscale       bool // the SDK's poller autoscaling for workflow and activity tasks
	StickyCache     int  // 0: the SDK's default (10,000 runs)
	NoCache         bool // no transcript cache: every read by query
	Gzip            bool // gRPC compression on, as for a remote server
}

// register defines c's flags on fs: the driver's, which it passes on to
// the worker process (args), and the worker process's own.
func (c *workerConfig) register(fs *flag.FlagSet) {
	fs.IntVar(&c.WorkflowPollers, "wf-pollers", 0, "the worker's workflow task pollers (0: the SDK's default)")
	fs.IntVar(&c.ActivityPollers, "act-pollers", 0, "the worker's activity task pollers (0: the SDK's default)")
	fs.BoolVar(&c.NoEager, "no-eager", false, "turn eager activity execution off in the worker")
	fs.BoolVar(&c.Autoscale, "autoscale", false, "scale the worker's pollers with the server's feedback (the SDK's poller autoscaling)")
	fs.IntVar(&c.StickyCache, "sticky-cache", 0, "the worker's sticky cache size in runs (0: the SDK's default)")
	fs.BoolVar(&c.NoCache, "no-cache", false, "run the worker without its transcript cache (every transcript read by query)")
	fs.BoolVar(&c.Gzip, "gzip", false, "turn the worker's gRPC compression on, as it is for a server that is not on loopback")
}

// args are the worker process's flags for c: only the settings that differ
// from the defaults, so that the worker of an earlier revision, which may
// not know the newer flags, takes the defaults.
func (c workerConfig) args() []string {
	var out []string
	add := func(set bool, flag string) {
		if set {
			out = append(out, flag)
		}
	}
	add(c.WorkflowPollers != 0, fmt.Sprintf("-wf-pollers=%d", c.WorkflowPollers))
	add(c.ActivityPollers != 0, fmt.Sprintf("-act-pollers=%d", c.ActivityPollers))
	add(c.NoEager, "-no-eager")
	add(c.Autoscale, "-autoscale")
	add(c.StickyCache != 0, fmt.Sprintf("-sticky-cache=%d", c.StickyCache))
	add(c.NoCache, "-no-cache")
	add(c.Gzip, "-gzip")
	return out
}

func (c workerConfig) String() string {
	var parts []string
	if c.WorkflowPollers != 0 {
		parts = append(parts, fmt.Sprintf("%d workflow pollers", c.WorkflowPollers))
	}
	if c.ActivityPollers != 0 {
		parts = append(parts, fmt.Sprintf("%d activity pollers", c.ActivityPollers))
	}
	if c.NoEager {
		parts = append(parts, "eager activities off in the worker")
	}
	if c.Autoscale {
		parts = append(parts, "pollers autoscaled")
	}
	if c.StickyCache != 0 {
		parts = append(parts, fmt.Sprintf("sticky cache %d", c.StickyCache))
	}
	if c.NoCache {
		parts = append(parts, "no transcript cache")
	}
	if c.Gzip {
		parts = append(parts, "gRPC compression on")
	}
	if len(parts) == 0 {
		return "worker defaults"
	}
	return strings.Join(parts, ", ")
}

func noop(context.Context) error { return nil }

// baselineWorkflow runs n no-op activities one after the other: the cost of
// Temporal alone for n sequential steps.
func baselineWorkflow(ctx workflow.Context, n int) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	for range n {
		if err := workflow.ExecuteActivity(ctx, "noop").Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

// priced is the bare workflow with one ingredient of a model call added to
// every step (see the prices phase).
type priced struct {
	N          int
	InputBytes int  // an activity input of this many bytes
	Upsert     bool // a search attribute upserted before each activity
	Heartbeat  bool // the activity heartbeats once, at its start
	Query      bool // the activity queries its workflow once
}

func pricedWorkflow(ctx workflow.Context, p priced) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	if err := workflow.SetQueryHandler(ctx, "step", func() (int, error) { return p.N, nil }); err != nil {
		return err
	}
	input := strings.Repeat("x", p.InputBytes)
	for i := range p.N {
		if p.Upsert {
			if err := workflow.UpsertTypedSearchAttributes(ctx, api.TodoTotalKey.ValueSet(int64(i))); err != nil {
				return err
			}
		}
		if err := workflow.ExecuteActivity(ctx, "step", p, input).Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

// stepActivity is a step of pricedWorkflow.
func stepActivity(c client.Client) func(context.Context, priced, string) error {
	return func(ctx context.Context, p priced, _ string) error {
		if p.Heartbeat {
			activity.RecordHeartbeat(ctx)
		}
		if p.Query {
			info := activity.GetInfo(ctx).WorkflowExecution
			if _, err := c.QueryWorkflow(ctx, info.ID, info.RunID, "step"); err != nil {
				return err
			}
		}
		return nil
	}
}

// workerStats is what the worker process reports on /stats.
type workerStats struct {
	RPC       map[string]rpcStat `json:"rpc"`
	HeapInuse uint64             `json:"heap_inuse"`
	Sys       uint64             `json:"sys"`
	Routines  int                `json:"goroutines"`
}

// runWorker is the worker role: it serves until its stdin closes (the
// driver exited or stopped it).
func runWorker(args []string) error {
	fs := flag.NewFlagSet("bench -role worker", flag.ContinueOnError)
	address := fs.String("address", "", "the server")
	namespace := fs.String("namespace", "default", "the namespace")
	state := fs.String("state", "", "the worker's state folder")
	var cfg workerConfig
	cfg.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if cfg.StickyCache > 0 {
		worker.SetStickyWorkflowCacheSize(cfg.StickyCache)
	}
	counter := newRPCCounter()
	conn := client.ConnectionOptions{
		DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(counter.interceptor)},
	}
	// The worker compresses as todoflow's own worker would for this
	// server (none on loopback), unless the lever turns gzip on.
	conn.GrpcCompression = agentworker.Compression(*address, false)
	if cfg.Gzip {
		conn.GrpcCompression = &client.GrpcCompressionGzip{}
	}
	c, err := client.Dial(client.Options{
		HostPort:          *address,
		Namespace:         *namespace,
		Logger:            sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))),
		ConnectionOptions: conn,
	})
	if err != nil {
		return fmt.Errorf("dial %s: %w", *address, err)
	}
	defer c.Close()
	opts := worker.Options{
		MaxConcurrentWorkflowTaskPollers: cfg.WorkflowPollers,
		MaxConcurrentActivityTaskPollers: cfg.ActivityPollers,
		DisableEagerActivities:           cfg.NoEager,
	}
	if cfg.Autoscale {
		opts.WorkflowTaskPollerBehavior = worker.NewPollerBehaviorAutoscaling(worker.PollerBehaviorAutoscalingOptions{})
		opts.ActivityTaskPollerBehavior = worker.NewPollerBehaviorAutoscaling(worker.PollerBehaviorAutoscalingOptions{})
	}
	aopts := agentworker.Options{ScriptDir: "/", StateDir: *state, Worker: opts, Logger: slog.New(slog.DiscardHandler)}
	if cfg.NoCache {
		aopts.TranscriptCacheBytes = -1
	}
	w, err := agentworker.New(c, aopts)
	if err != nil {
		return err
	}
	b := worker.New(c, baselineQueue, opts)
	b.RegisterWorkflowWithOptions(baselineWorkflow, workflow.RegisterOptions{Name: "baseline"})
	b.RegisterWorkflowWithOptions(bareChatWorkflow, workflow.RegisterOptions{Name: "bareChat"})
	b.RegisterActivityWithOptions(noop, activity.RegisterOptions{Name: "noop"})
	b.RegisterWorkflowWithOptions(pricedWorkflow, workflow.RegisterOptions{Name: "priced"})
	b.RegisterActivityWithOptions(stepActivity(c), activity.RegisterOptions{Name: "step"})
	for _, x := range []worker.Worker{w, b} {
		if err := x.Start(); err != nil {
			return fmt.Errorf("start worker: %w", err)
		}
		defer x.Stop()
	}

	mux := http.NewServeMux()
	var (
		mu      sync.Mutex
		profile *os.File
	)
	mux.HandleFunc("/cpuprofile/start", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		f, err := os.Create(r.URL.Query().Get("file"))
		if err == nil {
			if err = pprof.StartCPUProfile(f); err != nil {
				f.Close()
			}
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		profile = f
	})
	mux.HandleFunc("/cpuprofile/stop", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if profile == nil {
			http.Error(w, "no profile running", http.StatusConflict)
			return
		}
		pprof.StopCPUProfile()
		if err := profile.Close(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
		profile = nil
	})
	mux.HandleFunc("/stats", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("gc") != "" {
			// What the process needs, not what the collector has not
			// returned yet.
			debug.FreeOSMemory()
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		_ = json.NewEncoder(w).Encode(workerStats{RPC: counter.snapshot(), HeapInuse: ms.HeapInuse, Sys: ms.Sys, Routines: runtime.NumGoroutine()})
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = http.Serve(ln, mux) }()
	fmt.Printf("ready %s\n", ln.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}

// workerProc is the driver's handle on a worker process.
type workerProc struct {
	cmd   *exec.Cmd
	stdin io.Closer
	http  string
}

// startWorker starts a worker process on the server at address: this
// program, or exe when it is not "" (the program of another revision).
func startWorker(ctx context.Context, exe, address, namespace, state string, cfg workerConfig) (*workerProc, error) {
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	args := append([]string{"-role", "worker", "-address", address, "-namespace", namespace, "-state", state}, cfg.args()...)
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the worker process: %w", err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "ready ")
	if err != nil || !ok {
		_ = stdin.Close()
		_ = cmd.Wait()
		return nil, fmt.Errorf("the worker process did not start: %q %v", line, err)
	}
	return &workerProc{cmd: cmd, stdin: stdin, http: addr}, nil
}

func (w *workerProc) pid() int { return w.cmd.Process.Pid }

// stats reads the worker's counters; gc first returns freed memory to the
// system.
func (w *workerProc) stats(gc bool) (workerStats, error) {
	url := "http://" + w.http + "/stats"
	if gc {
		url += "?gc=1"
	}
	resp, err := http.Get(url)
	if err != nil {
		return workerStats{}, fmt.Errorf("worker stats: %w", err)
	}
	defer resp.Body.Close()
	var st workerStats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return workerStats{}, fmt.Errorf("worker stats: %w", err)
	}
	return st, nil
}

// profile starts the worker's CPU profile into file; the returned stop
// ends it.
func (w *workerProc) profile(file string) (stop func() error, err error) {
	if err := w.get("/cpuprofile/start?file=" + url.QueryEscape(file)); err != nil {
		return nil, err
	}
	return func() error { return w.get("/cpuprofile/stop") }, nil
}

func (w *workerProc) get(path string) error {
	resp, err := http.Get("http://" + w.http + path)
	if err != nil {
		return fmt.Errorf("worker %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("worker %s: %s: %s", path, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// stop ends the worker process: its stdin closes, it stops its workers and
// exits.
func (w *workerProc) stop() error {
	_ = w.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- w.cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return fmt.Errorf("the worker process: %w", err)
		}
		return err
	case <-time.After(30 * time.Second):
		_ = w.cmd.Process.Kill()
		return errors.New("the worker process did not stop within 30 s; killed")
	}
}
