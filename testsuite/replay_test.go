package testsuite

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/testsuite/scenario"
	"github.com/todoflow/todoflow/workflows"
)

var record = flag.Bool("record", false, "TestRecordHistories: write testdata/histories from fresh runs")

// recorded names the scenarios whose histories are kept in testdata/histories.
// Together they exercise every path of AgentWorkflow's command sequence: the
// todo loop, every guard, a plan with approval, and a subagent that unblocks
// its parent's step (parent and child histories both).
var recorded = []string{"01_write_todos_lifecycle", "07_every_guard", "05_plan_with_approval", "06b_subagent_finishes_last"}

// recordedID is the workflow id a recorded scenario runs under. A subagent's
// id derives from its parent's, so replay must use the same ids.
func recordedID(name string) string { return "recorded-" + name }

// historyID is the workflow id of a history file: NAME.json ran as
// recordedID(NAME), NAME@AGENT.json as that run's subagent AGENT.
func historyID(file string) string {
	name, agent, child := strings.Cut(strings.TrimSuffix(filepath.Base(file), ".json"), "@")
	if child {
		return recordedID(name) + "/" + agent
	}
	return recordedID(name)
}

func replay(data []byte, id string) error {
	hist, err := client.HistoryFromJSON(strings.NewReader(string(data)), client.HistoryJSONOptions{})
	if err != nil {
		return fmt.Errorf("load history of %s: %w", id, err)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(workflows.AgentWorkflow, workflow.RegisterOptions{Name: workflows.WorkflowName})
	return r.ReplayWorkflowHistoryWithOptions(nil, hist, worker.ReplayWorkflowHistoryOptions{
		OriginalExecution: workflow.Execution{ID: id, RunID: "replay"},
	})
}

// TestReplayRecordedHistories replays histories recorded by earlier versions
// of AgentWorkflow. A failure means a change altered the command sequence of
// runs already in flight: version it (workflow.GetVersion) instead.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob("testdata/histories/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
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

// TestRecordHistories plays the recorded scenarios against a real server and
// replays each fresh history at once, which catches non-determinism in the
// current code (map order, time) that an old history cannot. With -record it
// also writes the histories to testdata/histories, overwriting the recorded
// ones: do that only to add a scenario (and restore the others with git), or
// after a versioned change whose old histories stay as NAME-vN.json.
func TestRecordHistories(t *testing.T) {
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	for _, name := range recorded {
		t.Run(name, func(t *testing.T) {
			sc, err := scenario.Load(filepath.Join("testdata", "scenarios", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			out, err := scenario.Play(ctx, s.c, sc, scenario.Options{WorkflowID: recordedID(name)})
			if err != nil {
				t.Fatalf("play: %v", err)
			}
			files := []string{name + ".json"}
			var st struct {
				Subagents map[string]json.RawMessage `json:"subagents"`
			}
			_ = json.Unmarshal(out.State, &st)
			for agent := range st.Subagents {
				files = append(files, name+"@"+agent+".json")
			}
			sort.Strings(files)
			dir := t.TempDir()
			if *record {
				dir = filepath.Join("testdata", "histories")
			}
			for _, file := range files {
				id := historyID(file)
				data, _, err := scenario.History(ctx, s.c, id, "")
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, file), data, 0o644); err != nil {
					t.Fatal(err)
				}
				if err := replay(data, id); err != nil {
					t.Fatalf("replay of a fresh history: %v", err)
				}
			}
		})
	}
}
