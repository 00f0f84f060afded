package testsuite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/scenario"
	"github.com/todoflow/todoflow/worker/agentworker"
	"github.com/todoflow/todoflow/workflows"
)

// The upgrade of TestClusterUpgradeKeepsSessions goes from build A, the worker binary of
// this tree, to build B, whose workflows write one command that A's do not: the test
// binary, started again as a worker (buildBEnv), runs agentworker's worker with an
// interceptor that upserts the memo buildMemo first thing in every run, as a change to
// AgentWorkflow's command sequence would. A's histories do not replay on B, nor B's on A.
const (
	buildBEnv   = "TODOFLOW_E2E_BUILD_B_WORKER"
	buildMemo   = "todoflow_build"
	deployName  = "todoflow"
	buildA      = "build-a"
	buildB      = "build-b"
	upgradeWait = 4 * time.Minute
)

func init() {
	if os.Getenv(buildBEnv) != "" {
		os.Exit(runBuildB())
	}
}

// runBuildB is build B's main: agentworker.Run with its settings from the environment
// (TEMPORAL_ADDRESS, TODOFLOW_STATE_DIR, TODOFLOW_SCRIPT_DIR, TODOFLOW_DEPLOYMENT and
// TODOFLOW_BUILD_ID) until SIGTERM or an interrupt.
func runBuildB() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := client.Dial(client.Options{HostPort: os.Getenv("TEMPORAL_ADDRESS"), Namespace: "default", Logger: quiet{}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "build B: %v\n", err)
		return 1
	}
	defer c.Close()
	err = agentworker.Run(ctx, c, "default", agentworker.Options{
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)),
		Worker: worker.Options{Interceptors: []interceptor.WorkerInterceptor{&buildBInterceptor{}}},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "build B: %v\n", err)
		return 1
	}
	return 0
}

// buildBInterceptor is build B's change: every run upserts buildMemo before it starts.
type buildBInterceptor struct {
	interceptor.WorkerInterceptorBase
}

func (*buildBInterceptor) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &buildBWorkflow{interceptor.WorkflowInboundInterceptorBase{Next: next}}
}

type buildBWorkflow struct {
	interceptor.WorkflowInboundInterceptorBase
}

func (w *buildBWorkflow) ExecuteWorkflow(ctx workflow.Context, in *interceptor.ExecuteWorkflowInput) (any, error) {
	if err := workflow.UpsertMemo(ctx, map[string]any{buildMemo: buildB}); err != nil {
		return nil, err
	}
	return w.Next.ExecuteWorkflow(ctx, in)
}

// TestClusterUpgradeKeepsSessions upgrades a fleet with Worker Versioning, as docs/protocol.md
// tells (Versions and upgrades): two workers of build A, in deployment "todoflow", start
// five sessions that wait for their user (one paused, one awaiting its plan's approval, a
// chat, one that wrote a file, a tree whose subagent comes in its second turn); two
// workers of build B join the deployment and B is made its current version with
// `temporal worker deployment set-current-version`. Then the five are answered and three
// new sessions start: every session finishes as its scenario expects, the new ones wholly
// on B, the old ones wholly on A: their subagent started after the switch, and the runs
// they continued as, too, since server 1.29 starts the next run of a pinned session on
// its version (it ignores the upgrade the workflow asks for). Once the old sessions are
// done, A's version drains and its workers are stopped.
func TestClusterUpgradeKeepsSessions(t *testing.T) {
	cl := startCluster(t, "limit.historyCount.suggestContinueAsNew=30",
		// A version's drainage is looked at every 3 minutes, after a grace of 3 minutes.
		"matching.wv.VersionDrainageStatusRefreshInterval=1s",
		"matching.wv.VersionDrainageStatusVisibilityGracePeriod=1s")
	c := cl.dial(t)
	start := time.Now()
	binA := buildWorker(t)
	t.Logf("build A (go build ./worker) in %s", time.Since(start).Round(100*time.Millisecond))

	// Build A, started as docs/protocol.md says, with --deployment and --build-id.
	var fleetA []*workerProc
	hostsA := map[string]bool{}
	for i := range 2 {
		w := cl.startWorkerBin(t, fmt.Sprintf("A%d", i+1), binA, nil, "--deployment", deployName, "--build-id", buildA)
		fleetA = append(fleetA, w)
		hostsA[w.logged(t, "HostQueue=")] = true
	}
	cl.waitVersion(t, buildA)
	cl.setCurrent(t, deployName, buildA)
	t.Logf("%s current", buildA)

	// The old sessions wait for their user until B is current.
	answer := make(chan struct{})
	type session struct {
		kind, id string
		old      bool
		sc       *scenario.Scenario
		done     <-chan played
	}
	var sessions []*session
	play := func(kind string, sc *scenario.Scenario, onA bool) *session {
		s := &session{kind: kind, id: fmt.Sprintf("upgrade-%s-%s", kind, time.Now().Format("150405.000")), old: onA, sc: sc}
		var gate <-chan struct{}
		if onA {
			gate = answer
		}
		s.done = cl.playCLI(t, c, s.sc, s.id, 5*time.Minute, gate)
		sessions = append(sessions, s)
		return s
	}
	same := func(map[string]any) {}
	old := []*session{
		play("paused", scenarioVariant(t, "04_pause_and_resume.json", same), true),
		play("approval", scenarioVariant(t, "05_plan_with_approval.json", same), true),
		play("chat", scenarioVariant(t, "08_chat_continue_as_new.json", same), true),
		play("files", writeScenario(t, filesScenario), true),
		// Scenario 06e after a first turn that waits for the user: its subagent starts
		// after the upgrade.
		play("tree", scenarioVariant(t, "06e_child_depends_on_parent.json", func(m map[string]any) {
			m["input"].(map[string]any)["idle_timeout_s"] = 600
			m["model"] = append([]any{map[string]any{"content": "Ready when you are."}}, m["model"].([]any)...)
			m["user"] = []any{map[string]any{"when": "waiting_user", "update": "send_message", "args": "Go ahead."}}
		}), true),
	}
	waiting := map[string]string{"paused": api.StatusPaused, "approval": api.StatusAwaitingApproval,
		"chat": api.StatusWaitingUser, "files": api.StatusWaitingUser, "tree": api.StatusWaitingUser}
	for _, s := range old {
		waitFor(t, 2*time.Minute, s.kind+" waiting for its user", func() bool {
			st, ok := queryState(context.Background(), c, s.id)
			return ok && st.Status == waiting[s.kind]
		})
	}
	t.Logf("on %s: paused, approval, chat, files and tree wait for their user", buildA)

	// Build B joins the deployment (through the environment) and becomes current.
	for i := range 2 {
		cl.startWorkerBin(t, fmt.Sprintf("B%d", i+1), os.Args[0],
			[]string{buildBEnv + "=1", agentworker.EnvDeployment + "=" + deployName, agentworker.EnvBuildID + "=" + buildB})
	}
	cl.waitVersion(t, buildB)
	switched := time.Now()
	cl.setCurrent(t, deployName, buildB)
	t.Logf("%s current; %s is %s", buildB, buildA, cl.drainage(t, buildA))
	// The sessions that keep A draining, as docs/protocol.md lists them.
	query := fmt.Sprintf("TemporalWorkerDeploymentVersion=%q AND ExecutionStatus=%q", deployName+":"+buildA, "Running")
	var count string
	waitFor(t, 2*time.Minute, "the old sessions listed as running on "+buildA, func() bool {
		out, err := cl.temporal(context.Background(), "workflow", "count", "--query", query)
		if c := strings.TrimSpace(out); c != count || err != nil {
			t.Logf("temporal workflow count: %s (%v)", c, err) // each change, for a failure's report
			count = c
		}
		return err == nil && count == fmt.Sprintf("Total: %d", len(old))
	})
	t.Logf("temporal workflow count --query '%s': %s", query, count)

	newPlan := play("new-plan", scenarioVariant(t, "05_plan_with_approval.json", same), false)
	play("new-chat", scenarioVariant(t, "08_chat_continue_as_new.json", same), false)
	play("new-tree", scenarioVariant(t, "06e_child_depends_on_parent.json", same), false)
	close(answer)

	for _, s := range sessions {
		res := <-s.done
		if res.err != nil {
			t.Fatalf("%s (%s): %v", s.kind, s.id, res.err)
		}
		t.Run(s.kind, func(t *testing.T) { checkExpect(t, s.sc, res.out) })
		if s.kind == "files" {
			// The file written on A before the upgrade was read after it, on its host.
			if ws := decodeState(t, res.out).Workspace; ws == nil || !hostsA[ws.HostQueue] {
				t.Errorf("files: workspace %+v; want the host queue of a worker of A (%v)", ws, hostsA)
			}
		}
	}
	ended := time.Now()
	t.Logf("every session finished %s after %s became current", ended.Sub(switched).Round(100*time.Millisecond), buildB)

	// Each run on one build: the old sessions' on A, the new ones' on B. The old chat's
	// later runs too: the workflow asks for AutoUpgrade when it continues as new, but
	// server 1.29 does not know that field (temporalio/temporal#8784 came after it) and
	// starts the next run of a pinned session on its version. A server that knows it
	// moves them to B: then this test and docs/protocol.md change.
	for _, s := range sessions {
		want := buildB
		if s.old {
			want = buildA
		}
		ids := []string{s.id}
		if strings.HasSuffix(s.kind, "tree") {
			ids = append(ids, s.id+"/analyst") // the subagent, pinned with its parent
		}
		for _, id := range ids {
			name := s.kind + strings.TrimPrefix(id, s.id)
			runs := cl.runBuilds(t, c, id)
			for i, r := range runs {
				if len(r.builds) != 1 || r.builds[0] != want || r.pinned != want || r.memo != (want == buildB) {
					t.Errorf("%s, run %d of %d: workflow tasks completed by %v, pinned to %q, memo %s=%v; want all on %s",
						name, i+1, len(runs), r.builds, r.pinned, buildMemo, r.memo, want)
				}
			}
			t.Logf("%s: %d run(s), each pinned to %s", name, len(runs), want)
			if strings.HasSuffix(name, "chat") && len(runs) < 2 {
				t.Errorf("%s: %d run(s); want it to have continued as new", name, len(runs))
			}
		}
	}

	// A's histories do not replay on B's code, nor B's on A's: the builds differ in commands.
	for _, s := range []*session{old[1], newPlan} {
		other, own := "B", "A"
		if !s.old {
			other, own = "A", "B"
		}
		if _, err := replayBuild(t, c, s.id, other == "B"); err == nil {
			t.Errorf("%s's history replayed on build %s's code; want a nondeterminism error", s.kind, other)
		}
		// The control: its own build's code replays it. (Once it failed while the
		// workflow's code changed between the build of A and of this test binary; the
		// history is kept for whoever looks into a failure.)
		if data, err := replayBuild(t, c, s.id, own == "B"); err != nil {
			kept := "not kept"
			if f, ferr := os.CreateTemp("", "todoflow-replay-"+s.id+"-*.json"); ferr == nil {
				_, _ = f.Write(data)
				f.Close()
				kept = "kept in " + f.Name()
			}
			t.Errorf("%s's history did not replay on its own build %s's code (%s): %.600s", s.kind, own, kept, err)
		}
	}

	// Drain A: no open session is pinned to it any more, so its workers may go.
	waitFor(t, upgradeWait, buildA+" drained", func() bool { return cl.drainage(t, buildA) == "drained" })
	t.Logf("%s drained %s after its last session ended; stopping its workers", buildA, time.Since(ended).Round(100*time.Millisecond))
	for _, w := range fleetA {
		w.stop(t)
	}
	// The old sessions' results stay. A query goes to a worker of the build the session
	// is pinned to: with none left, it is not answered.
	for _, s := range old {
		var res api.AgentResult
		if err := c.GetWorkflow(context.Background(), s.id, "").Get(context.Background(), &res); err != nil {
			t.Errorf("%s's result after A's workers stopped: %v", s.kind, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_, err := c.QueryWorkflow(ctx, old[0].id, "", api.StateQuery)
	cancel()
	answered := "answered"
	if err != nil {
		answered = "not answered: " + err.Error()
	}
	t.Logf("after A's workers stopped, the old sessions' results are read; %s's state query (5 s): %s", old[0].kind, answered)
}

// filesScenario writes a file in its first turn and reads it in its second, which comes
// after the upgrade: the read goes to the host of the first, a worker of build A.
const filesScenario = `{
  "name": "a file written before the upgrade is read after it, on its host",
  "input": {"prompt": "Write notes.txt, then read it back when I ask.", "idle_timeout_s": 600, "host_wait_s": 10},
  "model": [
    {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": "written before the upgrade"}}]},
    {"content": "Written."},
    {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
    {"content": "It says: written before the upgrade."}
  ],
  "user": [{"when": "waiting_user", "update": "send_message", "args": "Read it back."}],
  "expect": [
    ".run_status == \"completed\"",
    "[.messages[] | select(.role == \"tool\" and .is_error)] | length == 0",
    "[.messages[] | select(.role == \"tool\" and (.content | contains(\"written before the upgrade\")))] | length >= 1"
  ]
}`

// startWorkerBin runs the worker binary bin against the cluster with a state folder of its
// own and the scripted model of any scenario file; env and args are added. It is stopped
// (SIGTERM) when the test ends, and its log shown if the test failed.
func (cl *cluster) startWorkerBin(t *testing.T, name, bin string, env []string, args ...string) *workerProc {
	t.Helper()
	w := &workerProc{name: name, done: make(chan struct{})}
	w.cmd = exec.Command(bin, args...)
	w.cmd.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+cl.Address, "TEMPORAL_NAMESPACE=default",
		"TODOFLOW_STATE_DIR="+t.TempDir(), "TODOFLOW_SCRIPT_DIR=/", "TODOFLOW_HOST_QUEUE=",
		agentworker.EnvDeployment+"=", agentworker.EnvBuildID+"=")
	w.cmd.Env = append(w.cmd.Env, env...)
	w.cmd.Stdout, w.cmd.Stderr = w, w
	w.cmd.SysProcAttr = workerProcAttr()
	if err := w.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { _ = w.cmd.Wait(); close(w.done) }()
	t.Cleanup(func() {
		w.stop(t)
		if t.Failed() {
			w.mu.Lock()
			t.Logf("%s's log:\n%s", name, w.log.String())
			w.mu.Unlock()
		}
	})
	return w
}

// stop stops the worker as an operator does (SIGTERM, SIGKILL after 15 s) and waits
// until it is gone.
func (w *workerProc) stop(t *testing.T) {
	select {
	case <-w.done:
		return
	default:
	}
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.done:
	case <-time.After(15 * time.Second):
		t.Logf("%s did not stop within 15 s of SIGTERM: SIGKILL", w.name)
		_ = w.cmd.Process.Kill()
		<-w.done
	}
}

// setCurrent makes build the deployment's current version, as docs/protocol.md says to. The
// server can answer "Worker Deployment not found" for a while after a version appeared
// (the CLI reads the deployment's conflict token first, and the deployment's own record
// lags behind its version's under load): that answer is tried again, as an operator
// would, for up to two minutes.
func (cl *cluster) setCurrent(t *testing.T, deployment, build string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := cl.temporal(ctx, "worker", "deployment", "set-current-version", "--deployment-name", deployment, "--build-id", build, "--yes")
		cancel()
		if err == nil {
			return
		}
		if !strings.Contains(err.Error(), "Worker Deployment not found") || time.Now().After(deadline) {
			t.Fatal(err)
		}
		t.Logf("set-current-version %s: %v; again", build, err)
		time.Sleep(2 * time.Second)
	}
}

// versionInfo is what `temporal worker deployment describe-version -o json` tells of a
// version (CLI 1.5.1's spelling).
type versionInfo struct {
	CurrentSince time.Time `json:"currentSinceTime"`
	DrainageInfo struct {
		Status string `json:"drainageStatus"`
	} `json:"drainageInfo"`
	TaskQueues []struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"taskQueuesInfos"`
}

// describeVersion describes a version of the deployment; ok is false while it has none.
func (cl *cluster) describeVersion(t *testing.T, build string) (v versionInfo, ok bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := cl.temporal(ctx, "worker", "deployment", "describe-version", "--deployment-name", deployName, "--build-id", build, "--output", "json")
	if err != nil {
		return v, false
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("describe-version %s: %v\n%s", build, err, out)
	}
	return v, true
}

// waitVersion waits until the workers of build have made it a version of the deployment,
// with the task queue todoflow's workflows and activities: set-current-version refuses a
// version that lacks a task queue of the current one.
func (cl *cluster) waitVersion(t *testing.T, build string) {
	t.Helper()
	waitFor(t, 2*time.Minute, "version "+build+" of the deployment, polling todoflow's workflows and activities", func() bool {
		v, ok := cl.describeVersion(t, build)
		n := 0
		for _, q := range v.TaskQueues {
			if q.Name == api.TaskQueue {
				n++
			}
		}
		return ok && n == 2
	})
}

// drainage is a version's drainage status ("draining", "drained"), "current" while it is
// the current version, or "" before either.
func (cl *cluster) drainage(t *testing.T, build string) string {
	t.Helper()
	v, ok := cl.describeVersion(t, build)
	switch {
	case !ok:
		t.Fatalf("no version %s", build)
	case v.DrainageInfo.Status != "":
		return strings.ToLower(v.DrainageInfo.Status)
	case v.CurrentSince.Year() > 1:
		return "current"
	}
	return ""
}

// runBuild is where one run of a session ran.
type runBuild struct {
	builds []string // the build ids that completed its workflow tasks, each once
	pinned string   // the build the server pins it to
	memo   bool     // it has build B's memo
}

// runBuilds tells, run by run, where a session ran.
func (cl *cluster) runBuilds(t *testing.T, c client.Client, id string) []runBuild {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	runs, err := runsOf(ctx, c, id)
	if err != nil {
		t.Fatal(err)
	}
	var out []runBuild
	for _, run := range runs {
		var r runBuild
		it := c.GetWorkflowHistory(ctx, id, run, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatalf("history of %s: %v", id, err)
			}
			if a := ev.GetWorkflowTaskCompletedEventAttributes(); a != nil {
				b := a.GetDeploymentVersion().GetBuildId()
				if b == "" {
					b = a.GetDeployment().GetBuildId() //nolint:staticcheck // what server 1.29 writes
				}
				if !slices.Contains(r.builds, b) {
					r.builds = append(r.builds, b)
				}
			}
		}
		d, err := c.DescribeWorkflowExecution(ctx, id, run)
		if err != nil {
			t.Fatal(err)
		}
		info := d.GetWorkflowExecutionInfo()
		if vi := info.GetVersioningInfo(); vi.GetBehavior() == enumspb.VERSIONING_BEHAVIOR_PINNED {
			r.pinned = vi.GetDeploymentVersion().GetBuildId()
		}
		_, r.memo = info.GetMemo().GetFields()[buildMemo]
		out = append(out, r)
	}
	return out
}

// replayBuild replays the first run of a session on build A's code or build B's, and
// returns its history.
func replayBuild(t *testing.T, c client.Client, id string, onB bool) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	runs, err := runsOf(ctx, c, id)
	if err != nil {
		t.Fatal(err)
	}
	data, _, err := scenario.History(ctx, c, id, runs[0])
	if err != nil {
		t.Fatal(err)
	}
	hist, err := client.HistoryFromJSON(bytes.NewReader(data), client.HistoryJSONOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var opts worker.WorkflowReplayerOptions
	if onB {
		opts.Interceptors = []interceptor.WorkerInterceptor{&buildBInterceptor{}}
	}
	r, err := worker.NewWorkflowReplayerWithOptions(opts)
	if err != nil {
		t.Fatal(err)
	}
	// The replayer stands for a worker of the build: its build id is the
	// one a version of the deployment records (workflows/protocol.go).
	build := buildA
	if onB {
		build = buildB
	}
	r.RegisterWorkflowWithOptions(workflows.WithOptions(workflows.Options{BuildID: build}), workflow.RegisterOptions{Name: api.WorkflowName})
	return data, r.ReplayWorkflowHistoryWithOptions(quiet{}, hist, worker.ReplayWorkflowHistoryOptions{
		OriginalExecution: workflow.Execution{ID: id, RunID: runs[0]},
	})
}
