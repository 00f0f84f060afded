// Command bench measures what todoflow's durable loop costs against a bare
// Temporal workflow on the same server, in the same run. See doc.go.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/client"

	"github.com/todoflow/todoflow/worker/agentworker"
	"github.com/todoflow/todoflow/worker/devserver"
)

var selfPID = os.Getpid()

func main() {
	if len(os.Args) > 2 && os.Args[1] == "-role" && os.Args[2] == "worker" {
		if err := runWorker(os.Args[3:]); err != nil {
			fmt.Fprintln(os.Stderr, "bench worker:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		var ue usageError
		if errors.As(err, &ue) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

type usageError struct{ error }

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// defaultPhases run when -phases names none; optPhases only when named.
var (
	defaultPhases = []string{"ratio", "steps", "prices", "chat", "stream", "replay", "idle", "levers"}
	optPhases     = []string{"cluster", "first"} // cluster needs PostgreSQL and a build of temporal-server
	allPhases     = slices.Concat(defaultPhases, optPhases)
)

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	quick := fs.Bool("quick", false, "a cheap check: phases ratio, steps and chat; 1 and 20 concurrent runs; 100 chat turns")
	phases := fs.String("phases", "", "comma-separated `PHASES` to run, of "+strings.Join(allPhases, ", ")+" (default all but "+strings.Join(optPhases, ", ")+"; with -quick ratio,steps,chat)")
	concs := fs.String("conc", "", "comma-separated concurrent runs of the ratio phase (default 1,20,100; with -quick 1,20)")
	reps := fs.Int("reps", 3, "samples per figure; the medians are reported")
	turns := fs.Int("turns", 0, "turns of the chat phase's session (default 500; with -quick 100)")
	replayTurns := fs.Int("replay-turns", 1000, "turns of the replayed session")
	idle := fs.Int("idle", 1000, "sessions of the idle phase")
	wake := fs.Bool("idle-wake", false, "after the idle phase, restart the worker and time every idle session's answer to a message")
	firstSessions := fs.Int("first-sessions", 100, "sessions the first phase starts at once")
	firstTurns := fs.Int("first-turns", 3, "turns of each session of the first phase")
	streamTurns := fs.Int("stream-turns", 3, "rounds of the stream phase (a long reply unwatched, watched, and a short one)")
	var ca clusterArgs
	fs.IntVar(&ca.sessions, "cluster-sessions", 1000, "chat sessions of the cluster phase, on each server")
	fs.IntVar(&ca.turns, "cluster-turns", 3, "turns of each session of the cluster phase")
	fs.IntVar(&ca.conc, "cluster-conc", 100, "sessions of the cluster phase at a time")
	saveHistory := fs.String("save-history", "", "write the replayed session's history (JSON) to `FILE`")
	cpuProfile := fs.String("cpuprofile", "", "write the worker's CPU profile during the ratio phase's highest concurrency to `FILE`")
	replayProfile := fs.String("replay-cpuprofile", "", "write the CPU profile of the replays to `FILE`")
	leverConcs := fs.String("lever-conc", "1,100", "comma-separated concurrent runs of the levers phase")
	onlyRevs := fs.Bool("only-revs", false, "the levers phase compares the worker defaults with the -revs workers only")
	revsFlag := fs.String("revs", "", "the levers and stream phases also run the worker of each earlier revision: `NAME=REV,...` (git revisions of this repository, built once)")
	var dc listFlag
	fs.Var(&dc, "dc", "extra server setting `KEY=VALUE` (repeatable), after the embedded server's own")
	var cfg workerConfig
	cfg.register(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	if *reps < 1 {
		return usageError{fmt.Errorf("-reps %d: want 1 or more", *reps)}
	}
	if ca.sessions < 1 || ca.turns < 1 || ca.conc < 1 {
		return usageError{fmt.Errorf("-cluster-sessions %d, -cluster-turns %d, -cluster-conc %d: want 1 or more each", ca.sessions, ca.turns, ca.conc)}
	}
	ca.reps = *reps
	want := defaultPhases
	if *quick {
		want = []string{"ratio", "steps", "chat"}
	}
	if *phases != "" {
		want = strings.Split(*phases, ",")
		for _, p := range want {
			if !slices.Contains(allPhases, p) {
				return usageError{fmt.Errorf("-phases: unknown phase %q (want some of %s)", p, strings.Join(allPhases, ", "))}
			}
		}
	}
	leverConcList, err := parseConcs(*leverConcs)
	if err != nil {
		return usageError{fmt.Errorf("-lever-conc: %w", err)}
	}
	concList := []int{1, 20, 100}
	if *quick {
		concList = []int{1, 20}
	}
	if *concs != "" {
		if concList, err = parseConcs(*concs); err != nil {
			return usageError{fmt.Errorf("-conc: %w", err)}
		}
	}
	revs, err := parseRevisions(*revsFlag)
	if err != nil {
		return usageError{err}
	}
	if *turns == 0 {
		*turns = 500
		if *quick {
			*turns = 100
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(revs) > 0 {
		if err := buildRevisions(ctx, revs, os.Stderr); err != nil {
			return err
		}
	}
	var model *streamServer
	if slices.Contains(want, "stream") {
		// Before the worker starts: it inherits the model's address.
		if model, err = startStreamServer(); err != nil {
			return err
		}
		defer model.close()
	}
	dir, err := os.MkdirTemp("", "todoflow-bench-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	fmt.Fprintf(out, "# go run ./testsuite/bench %s\n\n", strings.Join(args, " "))
	fmt.Fprintf(out, "%s; %d CPUs (%s), %s; %s; load average %s at the start.\n", time.Now().Format(time.DateTime), runtime.NumCPU(), cpuModel(),
		memTotal(), runtime.Version(), loadAverage())
	fmt.Fprintf(out, "Server: the embedded dev server (Temporal CLI %s, Server %s), its settings%s; worker: %s.\n",
		devserver.CLIVersion, devserver.MinServerVersion, extraSettings(dc), cfg)

	has := func(p string) bool { return slices.Contains(want, p) }
	if has("ratio") || has("steps") || has("prices") || has("chat") || has("stream") || has("idle") || has("levers") || has("first") {
		e, err := newEnv(ctx, filepath.Join(dir, "main"), dc, cfg, out)
		if err != nil {
			return err
		}
		defer e.close()
		if err := e.phases(ctx, want, phaseArgs{concs: concList, reps: *reps, turns: *turns, idle: *idle, cpuProfile: *cpuProfile, revs: revs, leverConcs: leverConcList, onlyRevs: *onlyRevs, model: model, streamTurns: *streamTurns, firstSessions: *firstSessions, firstTurns: *firstTurns, wake: *wake}); err != nil {
			return err
		}
	}
	if has("replay") {
		fmt.Fprintf(out, "\n## Replay of a %d-turn session\n\nOn a server of its own that does not suggest continue-as-new (%s).\n", *replayTurns, strings.Join(noContinueAsNew, ", "))
		e, err := newEnv(ctx, filepath.Join(dir, "replay"), append(slices.Clone(dc), noContinueAsNew...), cfg, out)
		if err != nil {
			return err
		}
		defer e.close()
		if err := e.measureReplay(ctx, *replayTurns, *reps, *saveHistory, *replayProfile); err != nil {
			return err
		}
	}
	if has("cluster") {
		if err := measureCluster(ctx, filepath.Join(dir, "cluster"), dc, cfg, ca, out); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "\nLoad average %s at the end.\n", loadAverage())
	return nil
}

type phaseArgs struct {
	concs       []int
	reps, turns int
	idle        int
	cpuProfile  string
	revs        []revision
	leverConcs  []int
	onlyRevs    bool
	model       *streamServer
	streamTurns int
	// firstSessions sessions of firstTurns turns start at once in the
	// first phase.
	firstSessions, firstTurns int
	// wake restarts the worker after the idle phase and sends every idle
	// session a message.
	wake bool
}

func (e *env) phases(ctx context.Context, want []string, pa phaseArgs) error {
	has := func(p string) bool { return slices.Contains(want, p) }
	// Warm up: the first runs pay for connections and caches.
	for range 2 {
		if _, err := e.agentRun(ctx); err != nil {
			return err
		}
		if _, err := e.baselineRun(ctx); err != nil {
			return err
		}
	}
	if has("ratio") {
		fmt.Fprintf(e.out, "\n## Agent runs against bare runs\n\nAn agent run: %d model calls and %d tool calls (scripted); a bare run: %d no-op activities one after the other. Medians of %d samples, agent and bare alternating.\n\n",
			runModelCalls, runToolCalls, runActivities, pa.reps)
		var rs []ratioResult
		for i, conc := range pa.concs {
			var stopProfile func() error
			if pa.cpuProfile != "" && i == len(pa.concs)-1 {
				abs, err := filepath.Abs(pa.cpuProfile)
				if err != nil {
					return err
				}
				if stopProfile, err = e.w.profile(abs); err != nil {
					return err
				}
			}
			r, err := e.measureRatio(ctx, conc, pa.reps)
			if stopProfile != nil {
				if perr := stopProfile(); perr != nil && err == nil {
					err = perr
				}
			}
			if err != nil {
				return err
			}
			rs = append(rs, r)
		}
		fmt.Fprintln(e.out)
		printRatios(e.out, rs)
	}
	if has("steps") {
		fmt.Fprintf(e.out, "\n## What a model call costs\n")
		if err := e.measureSteps(ctx, 5); err != nil {
			return err
		}
	}
	if has("prices") {
		if err := e.measurePrices(ctx, pa.reps, []int{1, 20}); err != nil {
			return err
		}
	}
	if has("chat") {
		fmt.Fprintf(e.out, "\n## History per chat turn\n\nOne session of %d turns, continue-as-new as the server suggests (history of every run so far).\n", pa.turns)
		if err := e.measureChat(ctx, pa.turns); err != nil {
			return err
		}
	}
	if has("stream") {
		fmt.Fprintf(e.out, "\n## A streamed reply: billable actions, and the first token to a watching client\n\nA model served over HTTP (openai-go, streaming) writes a reply in pieces %v apart, for %v; %d rounds.\n",
			streamGap, streamLong, pa.streamTurns)
		// This worker, then each -revs worker, in the same run.
		fmt.Fprintf(e.out, "\n### This worker\n")
		if err := e.measureStream(ctx, pa.model, pa.streamTurns); err != nil {
			return err
		}
		for _, r := range pa.revs {
			fmt.Fprintf(e.out, "\n### The worker of %s (%s)\n", r.name, r.rev)
			if err := e.restartWorkerOf(ctx, r.bin, e.cfg); err != nil {
				return err
			}
			if err := e.measureStream(ctx, pa.model, pa.streamTurns); err != nil {
				return err
			}
		}
		if len(pa.revs) > 0 {
			if err := e.restartWorker(ctx, e.cfg); err != nil {
				return err
			}
		}
	}
	if has("levers") {
		if err := e.measureLevers(ctx, pa.reps, pa.leverConcs, pa.revs, pa.onlyRevs); err != nil {
			return err
		}
	}
	if has("first") {
		fmt.Fprintf(e.out, "\n## A first reply when %d sessions start at once\n\nEach session sends its first message as soon as it is started; the first reply is timed from the start, later turns from their message. Each worker is a fresh process; the bare chat workflow runs on the same process, with the SDK's defaults.\n", pa.firstSessions)
		more := e.cfg
		more.WorkflowPollers, more.ActivityPollers = 4*sdkDefaultPollers, 4*sdkDefaultPollers
		scaled := e.cfg
		scaled.Autoscale = true
		if err := e.measureFirst(ctx, pa.firstSessions, pa.firstTurns, []workerConfig{e.cfg, more, scaled}); err != nil {
			return err
		}
	}
	if has("idle") {
		fmt.Fprintf(e.out, "\n## Worker memory with %d idle sessions\n\nA fresh worker process; the sessions are opened 50 at a time.\n", pa.idle)
		if err := e.restartWorker(ctx, e.cfg); err != nil {
			return err
		}
		if err := e.measureIdle(ctx, pa.idle, 50, pa.wake); err != nil {
			return err
		}
	}
	return nil
}

func newEnv(ctx context.Context, dir string, dc []string, cfg workerConfig, out io.Writer) (*env, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	srv, err := devserver.Start(ctx, devserver.Options{UIPort: -1, SearchAttributes: api.SearchAttributes(), DynamicConfig: dc, Progress: os.Stderr})
	if err != nil {
		return nil, err
	}
	e := &env{srv: srv, dir: dir, out: out, cfg: cfg}
	if e.c, err = dialDriver(srv.Address(), srv.Namespace()); err != nil {
		_ = srv.Stop()
		return nil, err
	}
	if e.model, err = writeScript(dir, "run", runScript()); err != nil {
		e.close()
		return nil, err
	}
	if err := e.restartWorker(ctx, cfg); err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

// dialDriver is the driver's client of the server at address. The driver
// is the starter: it dials as agentworker.DialWith does.
func dialDriver(address, namespace string) (client.Client, error) {
	return client.Dial(client.Options{
		HostPort: address, Namespace: namespace, Logger: quiet{},
		ConnectionOptions: client.ConnectionOptions{GrpcCompression: agentworker.Compression(address, true)},
	})
}

// restartWorker replaces the worker process with a fresh one of cfg.
func (e *env) restartWorker(ctx context.Context, cfg workerConfig) error {
	return e.restartWorkerOf(ctx, "", cfg)
}

// restartWorkerOf replaces the worker process with a fresh one of cfg,
// running the program exe ("" for this one).
func (e *env) restartWorkerOf(ctx context.Context, exe string, cfg workerConfig) error {
	if e.w != nil {
		if err := e.w.stop(); err != nil {
			return err
		}
		e.w = nil
	}
	state, err := os.MkdirTemp(e.dir, "worker-*")
	if err != nil {
		return err
	}
	w, err := startWorker(ctx, exe, e.srv.Address(), e.srv.Namespace(), state, cfg)
	if err != nil {
		return err
	}
	e.w, e.cfg = w, cfg
	return nil
}

func (e *env) close() {
	if e.w != nil {
		_ = e.w.stop()
	}
	if e.c != nil {
		e.c.Close()
	}
	_ = e.srv.Stop()
}

// parseConcs reads a comma-separated list of concurrent runs.
func parseConcs(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a number of runs", part)
		}
		out = append(out, n)
	}
	return out, nil
}

func extraSettings(dc []string) string {
	if len(dc) == 0 {
		return ""
	}
	return " and " + strings.Join(dc, ", ")
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for line := range strings.Lines(string(b)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func memTotal() string {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "memory unknown"
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return fmt.Sprintf("%.0f GiB", float64(kb)/(1<<20))
		}
	}
	return "memory unknown"
}

// quiet drops the SDK's logs of the driver's client; failures reach the
// driver through errors.
type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}
