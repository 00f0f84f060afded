package testsuite

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/testsuite/scenario"
	"github.com/todoflow/todoflow/workflows"
)

var record = flag.Bool("record", false, "TestRecordHistories: write testdata/histories from fresh runs")

// recorded names the scenarios whose histories are kept in testdata/histories.
// Together they exercise every path of AgentWorkflow's command sequence.
var recorded = []string{"01_write_todos_lifecycle", "07_every_guard"}

func replayer(t *testing.T) worker.WorkflowReplayer {
	t.Helper()
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(workflows.AgentWorkflow, workflow.RegisterOptions{Name: workflows.WorkflowName})
	return r
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
			if err := replayer(t).ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
				t.Fatalf("replay %s: %v", f, err)
			}
		})
	}
}

// TestRecordHistories plays the recorded scenarios against a real server and
// replays each fresh history at once, which catches non-determinism in the
// current code (map order, time) that an old history cannot. With -record it
// also writes the histories to testdata/histories.
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
			out, err := scenario.Play(ctx, s.c, sc, scenario.Options{})
			if err != nil {
				t.Fatalf("play: %v", err)
			}
			data, _, err := scenario.History(ctx, s.c, out.WorkflowID, "")
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), name+".json")
			if *record {
				path = filepath.Join("testdata", "histories", name+".json")
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := replayer(t).ReplayWorkflowHistoryFromJSONFile(nil, path); err != nil {
				t.Fatalf("replay of a fresh history: %v", err)
			}
		})
	}
}
