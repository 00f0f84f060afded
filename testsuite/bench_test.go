package testsuite

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/scenario"
)

// The benchmarks run against a real dev server. Machines here are shared and
// noisy, so each agent figure comes with a baseline measured in the same run:
// a bare workflow that runs the same number of no-op activities in sequence.
// The ratio is the number to compare across machines (BENCHMARKS.md).

const baselineQueue = "todoflow-baseline"

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

func benchServer(b *testing.B) *server {
	b.Helper()
	s := startServerTB(b)
	s.startWorkerTB(b, b.TempDir())
	w := worker.New(s.c, baselineQueue, worker.Options{})
	w.RegisterWorkflowWithOptions(baselineWorkflow, workflow.RegisterOptions{Name: "baseline"})
	w.RegisterActivityWithOptions(noop, activity.RegisterOptions{Name: "noop"})
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(w.Stop)
	return s
}

// BenchmarkRunScenario01 plays scenario 01 (4 model calls, 3 write_todos)
// per iteration; BenchmarkBaseline4 runs the bare 4-activity workflow.
func BenchmarkRunScenario01(b *testing.B) {
	s := benchServer(b)
	sc, err := scenario.Load("testdata/scenarios/01_write_todos_lifecycle.json")
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := scenario.Play(context.Background(), s.c, sc, scenario.Options{Poll: 5 * time.Millisecond}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBaseline4(b *testing.B) {
	s := benchServer(b)
	b.ResetTimer()
	for b.Loop() {
		run, err := s.c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{TaskQueue: baselineQueue}, "baseline", 4)
		if err != nil {
			b.Fatal(err)
		}
		if err := run.Get(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHistoryPerCall measures what a model call adds to workflow
// history (bytes/call), and what it would add if every CallModel input
// carried the transcript it sends (naive-bytes/call), for a run of 40 tool
// calls whose results are 1 KiB each.
func BenchmarkHistoryPerCall(b *testing.B) {
	s := benchServer(b)
	const calls = 40
	path := filepath.Join(b.TempDir(), "history.json")
	responses := []any{map[string]any{"tool_calls": []any{map[string]any{"name": "write_todos", "arguments": map[string]any{
		"todos": []any{map[string]any{"content": "Read every file", "status": "in_progress"}}}}}}}
	for i := range calls {
		responses = append(responses, map[string]any{"tool_calls": []any{map[string]any{"name": "write_file", "arguments": map[string]any{
			"path": fmt.Sprintf("f%d.txt", i), "content": strings.Repeat("x", 1024)}}}})
	}
	responses = append(responses, map[string]any{"tool_calls": []any{map[string]any{"name": "write_todos", "arguments": map[string]any{
		"todos": []any{map[string]any{"content": "Read every file", "status": "completed"}}}}}}, map[string]any{"content": "done"})
	data, _ := json.Marshal(map[string]any{"name": "history", "input": map[string]any{"prompt": "Write the files.", "todo": map[string]any{"stale_threshold": 0}}, "model": responses})
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	sc, err := scenario.Load(path)
	if err != nil {
		b.Fatal(err)
	}
	var perCall, naivePerCall float64
	b.ResetTimer()
	for b.Loop() {
		out, err := scenario.Play(context.Background(), s.c, sc, scenario.Options{Poll: 5 * time.Millisecond})
		if err != nil {
			b.Fatal(err)
		}
		d, err := s.c.DescribeWorkflowExecution(context.Background(), out.WorkflowID, "")
		if err != nil {
			b.Fatal(err)
		}
		var st struct {
			ModelCalls int `json:"model_calls"`
		}
		_ = json.Unmarshal(out.State, &st)
		perCall = float64(d.GetWorkflowExecutionInfo().GetHistorySizeBytes()) / float64(st.ModelCalls)
		// Without the new messages and digests, call k would carry messages [0, n_k).
		naive, size := 0, 0
		for _, m := range out.Messages {
			size += len(m)
			var msg model.Message
			if json.Unmarshal(m, &msg) == nil && msg.Role == model.RoleAssistant {
				naive += size - len(m) // the transcript before this answer
			}
		}
		naivePerCall = float64(int(d.GetWorkflowExecutionInfo().GetHistorySizeBytes())+naive) / float64(st.ModelCalls)
	}
	b.ReportMetric(perCall, "bytes/call")
	b.ReportMetric(naivePerCall, "naive-bytes/call")
}
