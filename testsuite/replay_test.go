package testsuite

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/scenario"
	"github.com/todoflow/todoflow/workflows"
)

var record = flag.Bool("record", false, "TestRecordHistories: write testdata/histories from fresh runs")

// recorded names the scenario files (testdata/scenarios) whose histories
// are kept in testdata/histories. With the runs of driven
// (record_faults_test.go), for what a scenario file cannot script, they are
// the corpus of the one baseline (workflows/doc.go, "Versions"), recorded
// from the current code; corpusPaths (corpus_paths_test.go) lists the path
// of AgentWorkflow's command sequence each case covers. The scenarios drive
// the todo loop, every guard, a pause, a plan with approval, subagents that
// unblock their parent's step, a sibling's and a parent's (parent and child
// histories both), a child that fails, one cancelled mid-call, one that
// times out, one cancelled when subagent_grace_s is over, a paused child
// resumed at the root, a child's plan and tool approvals answered at the
// root, a chat session that continues as new, one that summarises before it
// hands over, reporters, tool approvals, compaction (in the loop, in parts,
// and by compact_context), a named workspace on shared storage, and
// end_session during a plan-approval wait. driven adds model retries with
// backoff, a failed turn and retry_turn, a context overflow, a workspace
// host that refuses, is gone and comes back, reporters drained at the end
// of a run, the idle timeout, and a compact_context whose summary does not
// fit.
var recorded = []string{"01_write_todos_lifecycle", "02_validation_and_parallel", "03_finalization_guard",
	"04_pause_and_resume", "05_plan_with_approval", "06a_subagent_finishes_first", "06b_subagent_finishes_last",
	"06c_sibling_dependency", "06d_subagent_fails", "06e_child_depends_on_parent", "06f_paused_child_resumed_at_root",
	"07_every_guard", "08_chat_continue_as_new", "09_plan_reporters", "10_tool_approval", "11_compaction",
	"12_compact_context", "13_cancel_subagent", "14_subagent_approvals", "15_subagent_timeout", "16_subagent_grace",
	"17_carry_summary", "18_shared_workspace", "19_end_session_in_plan_wait", "31_held_call_handover"}

// A recordedCase is one run of the corpus: a scenario file of recorded,
// played as it is, or a run of driven. drive plays it as workflow id and
// returns the ids of the subagents it spawned, whose histories are kept
// too.
type recordedCase struct {
	name  string
	drive func(t *testing.T, env *recordEnv, id string) (subagents []string)
}

// recordedCases are the scenario files of recorded, then driven.
func recordedCases() []recordedCase {
	var cases []recordedCase
	for _, name := range recorded {
		cases = append(cases, recordedCase{name, playScenarioFile(name)})
	}
	return append(cases, driven...)
}

// playScenarioFile plays testdata/scenarios/NAME.json.
func playScenarioFile(name string) func(*testing.T, *recordEnv, string) []string {
	return func(t *testing.T, env *recordEnv, id string) []string {
		sc, err := scenario.Load(filepath.Join("testdata", "scenarios", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		return subagentsOf(t, env.play(t, sc, id))
	}
}

// subagentsOf are the ids of the subagents in a played run's final state.
func subagentsOf(t *testing.T, out *scenario.Output) []string {
	t.Helper()
	var st struct {
		Subagents map[string]json.RawMessage `json:"subagents"`
	}
	if err := json.Unmarshal(out.State, &st); err != nil {
		t.Fatalf("state of %s: %v", out.WorkflowID, err)
	}
	return slices.Sorted(maps.Keys(st.Subagents))
}

// workerOptions are the worker settings of AgentWorkflow that
// docs/testing.md names (an encrypted worker, a plain one): a recorded history must
// replay under each, since a session moves between workers of either kind.
var workerOptions = []workflows.Options{{}, {Encrypted: true}}

// recordDynamicConfig makes the recording server suggest continue-as-new
// after a few dozen events, so that a short chat session crosses it.
var recordDynamicConfig = []string{"limit.historyCount.suggestContinueAsNew=30"}

// recordedLate are the cases recorded on a server that suggests
// continue-as-new only at its default limits, as in production: their
// subagents end in the run that started them, whose child future takes the
// end in (on the early server the root hands over first and adopts them).
var recordedLate = map[string]bool{"06a_subagent_finishes_first": true, "06d_subagent_fails": true, "13_cancel_subagent": true, "15_subagent_timeout": true, "16_subagent_grace": true, "35_cancel_root_with_children": true}

// recordedID is the workflow id a recorded scenario runs under. A subagent's
// id derives from its parent's, so replay must use the same ids.
func recordedID(name string) string { return "recorded-" + name }

// historyID is the workflow id of a history file: NAME.json ran as
// recordedID(NAME), NAME@AGENT.json as that run's subagent AGENT. A run
// that continued as new is kept run by run, as NAME~1.json, NAME~2.json, …;
// and a history recorded before a versioned change may carry a -vN suffix.
func historyID(file string) string {
	name, agent, child := strings.Cut(historyName(file), "@")
	if child {
		return recordedID(name) + "/" + agent
	}
	return recordedID(name)
}

// historyName is a history file's NAME or NAME@AGENT, without its run
// number or version suffix.
func historyName(file string) string {
	base := strings.TrimSuffix(filepath.Base(file), ".json")
	base, _, _ = strings.Cut(base, "~")
	if i := strings.LastIndex(base, "-v"); i > 0 && strings.Trim(base[i+2:], "0123456789") == "" && len(base) > i+2 {
		base = base[:i]
	}
	return base
}

// runsOf lists the run ids of a workflow id, oldest first: a run that
// continued as new has one history per run.
func runsOf(ctx context.Context, c client.Client, id string) ([]string, error) {
	type run struct {
		id    string
		start time.Time
	}
	infos, err := listRuns(ctx, c, id)
	if err != nil {
		return nil, err
	}
	var runs []run
	for _, e := range infos {
		runs = append(runs, run{e.GetExecution().GetRunId(), e.GetStartTime().AsTime()})
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("no run of %s is listed", id)
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].start.Before(runs[j].start) })
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.id
	}
	return ids, nil
}

// listRuns lists every run of workflow id, in the server's order.
func listRuns(ctx context.Context, c client.Client, id string) ([]*workflowpb.WorkflowExecutionInfo, error) {
	var out []*workflowpb.WorkflowExecutionInfo
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf("WorkflowId = %q", id), NextPageToken: token})
		if err != nil {
			return nil, fmt.Errorf("list runs of %s: %w", id, err)
		}
		out = append(out, resp.GetExecutions()...)
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return out, nil
		}
	}
}

// replay replays a history under every worker setting of workerOptions.
func replay(data []byte, id string) error {
	for _, opts := range workerOptions {
		// Each replay gets its own copy: the replayer writes into the
		// history it is given.
		hist, err := client.HistoryFromJSON(strings.NewReader(string(data)), client.HistoryJSONOptions{})
		if err != nil {
			return fmt.Errorf("load history of %s: %w", id, err)
		}
		r := worker.NewWorkflowReplayer()
		r.RegisterWorkflowWithOptions(workflows.WithOptions(opts), workflow.RegisterOptions{Name: api.WorkflowName})
		err = r.ReplayWorkflowHistoryWithOptions(nil, hist, worker.ReplayWorkflowHistoryOptions{
			OriginalExecution: workflow.Execution{ID: id, RunID: "replay"},
		})
		if err != nil {
			return fmt.Errorf("worker options %+v: %w", opts, err)
		}
	}
	return nil
}

// firstRelease is the first release (docs/protocol.md: Versions and upgrades), whose
// corpus every later build must replay.
const firstRelease = "v0.1.0"

// TestReplayRecordedHistories replays the recorded corpus, and the corpus of
// every release (testdata/releases/VERSION), under every worker setting. A
// failure of the corpus means a change altered the command sequence: ship it
// as a new worker deployment build and re-record the corpus
// (TestRecordHistories -record) in the same commit (docs/protocol.md: Versions
// and upgrades). A
// failure of a release's corpus means this build would break the sessions
// that release started: its histories are never recorded again.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob("testdata/histories/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories: %v", err)
	}
	released, err := filepath.Glob("testdata/releases/*/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if first, _ := filepath.Glob(filepath.Join("testdata", "releases", firstRelease, "*.json")); len(first) == 0 {
		t.Fatalf("the corpus of %s, the first release, is gone from testdata/releases: the sessions it started would go unguarded", firstRelease)
	}
	for _, f := range append(files, released...) {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		if dir := filepath.Base(filepath.Dir(f)); dir != "histories" {
			name = dir + "/" + name
		}
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := replay(data, historyID(f)); err != nil {
				t.Fatalf("replay %s: %v", f, err)
			}
		})
	}
}

// TestRecordHistories plays the recorded cases against a real server,
// replays each fresh history at once, which catches non-determinism in the
// current code (map order, time) that an old history cannot, and checks
// that each case still takes the paths corpusPaths says it covers. With
// -record it also writes the histories to testdata/histories: after a
// change to the command sequence, delete the folder's files and record
// them all again.
func TestRecordHistories(t *testing.T) {
	// One model stub router for both servers' workers: a worker reads
	// OPENAI_BASE_URL, which is the process's, at each call.
	stubs := newStubRouter(t)
	envs := map[bool]*recordEnv{}
	recordedMarks := map[string][]string{}
	for _, rc := range recordedCases() {
		late := recordedLate[rc.name]
		if envs[late] == nil {
			envs[late] = newRecordEnv(t, stubs, late)
		}
		env := envs[late]
		t.Run(rc.name, func(t *testing.T) {
			start := time.Now()
			subagents := rc.drive(t, env, recordedID(rc.name))
			took := time.Since(start)
			recordedMarks[rc.name] = keepHistories(t, env.s.c, rc.name, subagents)
			t.Logf("%s played in %s; its histories show: %s", rc.name, took.Round(100*time.Millisecond), strings.Join(recordedMarks[rc.name], "; "))
		})
	}
	checkPaths(t, recordedMarks)
}

// keepHistories exports the histories of a recorded case (its run, and its
// subagents', each run of a workflow that continued as new apart), replays
// each, writes it to testdata/histories with -record (else to a temporary
// folder), and returns the marks they show together.
func keepHistories(t *testing.T, c client.Client, name string, subagents []string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	files := []string{name + ".json"}
	for _, agent := range subagents {
		files = append(files, name+"@"+agent+".json")
	}
	sort.Strings(files)
	dir := t.TempDir()
	if *record {
		dir = filepath.Join("testdata", "histories")
	}
	var all []string
	for _, file := range files {
		id := historyID(file)
		runs, err := runsOf(ctx, c, id)
		if err != nil {
			t.Fatal(err)
		}
		for i, runID := range runs {
			data, _, err := scenario.History(ctx, c, id, runID)
			if err != nil {
				t.Fatal(err)
			}
			name := file
			if len(runs) > 1 {
				name = fmt.Sprintf("%s~%d.json", strings.TrimSuffix(file, ".json"), i+1)
			}
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := replay(data, id); err != nil {
				t.Fatalf("replay of a fresh history %s: %v", name, err)
			}
			ms, err := marks(data)
			if err != nil {
				t.Fatalf("marks of %s: %v", name, err)
			}
			all = append(all, ms...)
		}
	}
	slices.Sort(all)
	return slices.Compact(all)
}
