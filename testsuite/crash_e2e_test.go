package testsuite

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/todoflow/todoflow/scenario"
)

// crashDelayMS is how long the model call a crash interrupts takes: long
// enough for every run of TestWorkerCrash to reach it before the kill.
const crashDelayMS = 6000

// crashRun is one run that TestWorkerCrash's kill interrupts.
type crashRun struct {
	name string
	sc   *scenario.Scenario
	id   string
	// ready holds when the run is where the kill must find it.
	ready func(c client.Client) bool
	// retried is the workflow whose model call the kill interrupts.
	retried string
	check   func(t *testing.T, st api.State)
}

// TestWorkerCrash kills the worker binary (kill -9) while three runs depend
// on it, and starts another worker: every run must end as if nothing had
// happened, the interrupted model calls being retried once their heartbeat
// times out. One kill hits them all, as a real crash would, which keeps the
// test's wall time at one heartbeat timeout.
func TestWorkerCrash(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end test against a real Temporal server; skipped with -short")
	}
	bin := buildWorker(t)
	s := startServer(t)
	stamp := time.Now().Format("150405.000000")
	runs := []*crashRun{
		{
			// A plain run whose second model call is in flight.
			name: "during a model call",
			sc: writeScenario(t, `{
  "name": "a worker killed while a model call is in flight",
  "input": {"prompt": "Fix the login bug."},
  "model": [
    {"tool_calls": [{"name": "write_todos", "arguments": {"todos": [
      {"content": "Find the bug", "status": "in_progress"}, {"content": "Fix it", "status": "pending"}]}}]},
    {"delay_ms": `+strconv.Itoa(crashDelayMS)+`, "tool_calls": [{"name": "write_todos", "arguments": {"todos": [
      {"content": "Find the bug", "status": "completed"}, {"content": "Fix it", "status": "in_progress"}]}}]},
    {"tool_calls": [{"name": "write_todos", "arguments": {"todos": [
      {"content": "Find the bug", "status": "completed"}, {"content": "Fix it", "status": "completed"}]}}]},
    {"content": "Fixed: the session cookie was not refreshed."}
  ],
  "time_limit_s": 90,
  "expect": [
    ".run_status == \"completed\"",
    ".state.status == \"completed\"",
    ".state.model_calls == 4 and .state.turns == 1",
    "[.state.todos[].status] == [\"completed\", \"completed\"]",
    "[.messages[].role] == [\"system\", \"user\", \"assistant\", \"tool\", \"assistant\", \"tool\", \"assistant\", \"tool\", \"assistant\"]",
    "[.messages[] | select(.role == \"tool\" and .is_error)] | length == 0",
    ".reply == \"Fixed: the session cookie was not refreshed.\""
  ]
}`),
			id: "crash-model-call-" + stamp,
			ready: func(c client.Client) bool {
				st, ok := queryState(context.Background(), c, "crash-model-call-"+stamp)
				return ok && st.ModelCalls == 2 && modelCallRunning(c, "crash-model-call-"+stamp)
			},
			retried: "crash-model-call-" + stamp,
		},
		{
			// Scenario 06b: the parent, its turn over, waits blocked on
			// the step that the implementer's in-flight call completes.
			name: "while the parent waits on a child",
			sc: scenarioVariant(t, "06b_subagent_finishes_last.json", func(m map[string]any) {
				agentResponse(t, m, "implementer", 2)["delay_ms"] = crashDelayMS
			}),
			id: "crash-blocked-parent-" + stamp,
			ready: func(c client.Client) bool {
				id := "crash-blocked-parent-" + stamp
				st, ok := queryState(context.Background(), c, id)
				return ok && st.Status == api.StatusBlocked && modelCallRunning(c, id+"/implementer")
			},
			retried: "crash-blocked-parent-" + stamp + "/implementer",
			check: func(t *testing.T, st api.State) {
				if got := st.Subagents["implementer"].Status; got != api.StatusCompleted {
					t.Errorf("subagents.implementer.status = %q, want completed", got)
				}
				if st.Plan == nil || st.Plan.Status != "completed" {
					t.Errorf("the parent's plan is %+v, want completed", st.Plan)
				}
			},
		},
		{
			// Scenario 06c: the root ended its session and waits for its
			// subagents; the consumer waits blocked on the producer, whose
			// completeStepWithOutput call is in flight.
			name: "while the parent's session waits for its children",
			sc: scenarioVariant(t, "06c_sibling_dependency.json", func(m map[string]any) {
				agentResponse(t, m, "producer", 2)["delay_ms"] = crashDelayMS
			}),
			id: "crash-finishing-parent-" + stamp,
			ready: func(c client.Client) bool {
				id := "crash-finishing-parent-" + stamp
				root, ok := queryState(context.Background(), c, id)
				if !ok || root.Status != api.StatusBlocked {
					return false
				}
				consumer, ok := queryState(context.Background(), c, id+"/consumer")
				return ok && consumer.Status == api.StatusBlocked && modelCallRunning(c, id+"/producer")
			},
			retried: "crash-finishing-parent-" + stamp + "/producer",
		},
	}

	w1 := startWorkerProc(t, bin, s, "worker-1")
	results := make([]<-chan played, len(runs))
	for i, r := range runs {
		results[i] = playAsync(t, s.c, r.sc, r.id, 2*time.Minute)
	}
	waitFor(t, 30*time.Second, "every run to reach its interrupted model call", func() bool {
		for _, r := range runs {
			if !r.ready(s.c) {
				return false
			}
		}
		return true
	})
	killed := time.Now()
	w1.kill(t)
	startWorkerProc(t, bin, s, "worker-2")

	for i, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			res := <-results[i]
			if res.err != nil {
				t.Fatalf("play: %v", res.err)
			}
			t.Logf("the run completed %s after the kill", time.Since(killed).Round(time.Millisecond))
			checkExpect(t, r.sc, res.out)
			if r.check != nil {
				r.check(t, decodeState(t, res.out))
			}
			if n := interruptedModelCalls(t, s.c, r.retried); n < 1 {
				t.Errorf("no model call of %s was interrupted and retried: the kill did not interrupt it", r.retried)
			}
		})
	}
}

// scenarioVariant loads a scenario of testdata/scenarios, lets change
// modify its JSON, and writes the result to a temporary file, which the
// worker reads as the run's script. Its time limit is 90 s.
func scenarioVariant(t *testing.T, name string, change func(map[string]any)) *scenario.Scenario {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "scenarios", name))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	change(m)
	m["time_limit_s"] = 90
	return writeScenario(t, mustJSON(t, m))
}

// agentResponse is response i (0-based) of a subagent's script in a
// scenario decoded as a map.
func agentResponse(t *testing.T, m map[string]any, agent string, i int) map[string]any {
	t.Helper()
	list, _ := m["agents"].(map[string]any)[agent].([]any)
	if i >= len(list) {
		t.Fatalf("the scenario has no response %d for %s", i, agent)
	}
	return list[i].(map[string]any)
}

// buildWorker builds ../worker (the module's worker command) into t's
// temporary folder and returns the binary's path.
func buildWorker(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "worker")
	cmd := exec.Command("go", "build", "-o", bin, "./worker")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./worker: %v\n%s", err, out)
	}
	return bin
}

// workerProc is a worker binary running as a child process.
type workerProc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	log  bytes.Buffer
}

func (w *workerProc) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.log.Write(p)
}

// startWorkerProc runs the worker binary against s with its own state
// folder, and the further flags given. It is stopped (SIGTERM, then SIGKILL)
// when the test ends, and its log is shown if the test failed.
func startWorkerProc(t *testing.T, bin string, s *server, name string, flags ...string) *workerProc {
	t.Helper()
	return startWorkerProcIn(t, bin, s, name, t.TempDir(), flags...)
}

// startWorkerProcIn is startWorkerProc with the state folder stateDir, and
// so the host queue named there.
func startWorkerProcIn(t *testing.T, bin string, s *server, name, stateDir string, flags ...string) *workerProc {
	t.Helper()
	w := &workerProc{name: name, done: make(chan struct{})}
	w.cmd = exec.Command(bin, append([]string{"--address", s.srv.Address(), "--namespace", s.srv.Namespace()}, flags...)...)
	w.cmd.Env = append(os.Environ(), "TODOFLOW_STATE_DIR="+stateDir, "TODOFLOW_SCRIPT_DIR=/", "TODOFLOW_HOST_QUEUE=", "TEMPORAL_ADDRESS=", "TEMPORAL_NAMESPACE=")
	w.cmd.Stdout, w.cmd.Stderr = w, w
	w.cmd.SysProcAttr = workerProcAttr()
	if err := w.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { _ = w.cmd.Wait(); close(w.done) }()
	t.Cleanup(func() {
		select {
		case <-w.done:
		default:
			_ = w.cmd.Process.Signal(os.Interrupt)
			select {
			case <-w.done:
			case <-time.After(10 * time.Second):
				_ = w.cmd.Process.Kill()
				<-w.done
			}
		}
		if t.Failed() {
			w.mu.Lock()
			t.Logf("%s's log:\n%s", name, w.log.String())
			w.mu.Unlock()
		}
	})
	return w
}

// kill ends the worker at once, as a crash would (SIGKILL), and waits until
// it is gone.
// logged waits for the worker to log a line with marker, and returns what
// follows the marker on that line, up to its first space.
func (w *workerProc) logged(t *testing.T, marker string) string {
	t.Helper()
	var rest string
	waitFor(t, time.Minute, "the worker's line "+strings.TrimSpace(marker), func() bool {
		w.mu.Lock()
		log := w.log.String()
		w.mu.Unlock()
		_, after, ok := strings.Cut(log, marker)
		rest, _, _ = strings.Cut(after, "\n")
		rest, _, _ = strings.Cut(rest, " ")
		return ok && rest != ""
	})
	return rest
}

func (w *workerProc) kill(t *testing.T) {
	t.Helper()
	if err := w.cmd.Process.Kill(); err != nil {
		t.Fatalf("kill %s: %v", w.name, err)
	}
	select {
	case <-w.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not exit after SIGKILL", w.name)
	}
}

// modelCallRunning reports whether a model call of the workflow has been
// picked up by a worker (not merely scheduled).
func modelCallRunning(c client.Client, workflowID string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d, err := c.DescribeWorkflowExecution(ctx, workflowID, "")
	if err != nil {
		return false
	}
	for _, a := range d.GetPendingActivities() {
		if a.GetActivityType().GetName() == api.ModelCallActivity && a.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED {
			return true
		}
	}
	return false
}

// interruptedModelCalls counts the model call attempts of a workflow that a
// lost worker interrupted: attempts the server retried (runs before the
// durable-sessions version) and attempts that timed out, which the workflow
// retries itself.
func interruptedModelCalls(t *testing.T, c client.Client, workflowID string) int {
	t.Helper()
	_, n := activityAttempts(t, c, workflowID, api.ModelCallActivity)
	return n
}

// interruptedActivities counts the attempts of a workflow's activities of
// type name that did not end on their first try (activityAttempts).
func interruptedActivities(t *testing.T, c client.Client, workflowID, name string) int {
	t.Helper()
	_, n := activityAttempts(t, c, workflowID, name)
	return n
}

// activityAttempts reads the latest run of workflowID: how many activities
// of type name it scheduled, and how many of their attempts did not end the
// activity on its first try: retried by the server (a retry leaves no event,
// only the attempt in the started event) or timed out.
func activityAttempts(t *testing.T, c client.Client, workflowID, name string) (scheduledN, interrupted int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	scheduled := map[int64]bool{}
	it := c.GetWorkflowHistory(ctx, workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatalf("history of %s: %v", workflowID, err)
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == name {
			scheduled[ev.GetEventId()] = true
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil && scheduled[a.GetScheduledEventId()] && a.GetAttempt() > 1 {
			interrupted++
		}
		if a := ev.GetActivityTaskTimedOutEventAttributes(); a != nil && scheduled[a.GetScheduledEventId()] {
			interrupted++
		}
	}
	return len(scheduled), interrupted
}
