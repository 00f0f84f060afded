package testsuite

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
)

// TestMeasureRootWaitingOnItsChildren: the largest run of a root that waits
// for its user while its subagents work. The root spawns four subagents
// and ends its turn; each works a plan of 25 steps (52 plan events), every
// event signalled to the root, which logs it. The server suggests
// continue-as-new at 200 events. Reported: the root's runs, and the events
// and bytes of its largest run. Before the root handed over with children
// running, that run held the whole tree's traffic; a tree that works longer
// grows it without bound, up to the server's limits. Opt-in:
//
//	TODOFLOW_MEASURE=1 go test ./testsuite -run TestMeasureRootWaitingOnItsChildren -count=1 -v
//
// Its counts take 10 s, so it runs in every `go test` too, within its CI
// bound (below the root that held the whole tree's traffic).
func TestMeasureRootWaitingOnItsChildren(t *testing.T) {
	t.Parallel()
	s := startServerTB(t, "limit.historyCount.suggestContinueAsNew=200")
	s.startWorker(t, t.TempDir())

	const children, steps = 4, 25
	var spawns []any
	agents := map[string]any{}
	quiet := map[string]any{"finalization_max_corrections": 0, "continuation": false, "plan_approval": "auto"}
	for i := 1; i <= children; i++ {
		id := fmt.Sprintf("worker%d", i)
		spawns = append(spawns, map[string]any{"name": "spawn_subagent",
			"arguments": map[string]any{"agent_id": id, "task": "Work through the steps.", "todo": quiet}})
		var names []string
		for j := 1; j <= steps; j++ {
			names = append(names, fmt.Sprintf("step %d", j))
		}
		script := []any{
			map[string]any{"tool_calls": []any{map[string]any{"name": "createPlan", "arguments": map[string]any{"title": "Work " + id, "steps": names}}}},
			map[string]any{"tool_calls": []any{map[string]any{"name": "startPlan", "arguments": map[string]any{}}}},
		}
		for j := 1; j <= steps; j++ {
			step := fmt.Sprintf("step_%d", j)
			script = append(script, map[string]any{"delay_ms": 100, "tool_calls": []any{
				map[string]any{"name": "setStepStatus", "arguments": map[string]string{"step_id": step, "status": "in_progress"}},
				map[string]any{"name": "setStepStatus", "arguments": map[string]string{"step_id": step, "status": "completed", "result": "done"}}}})
		}
		script = append(script,
			map[string]any{"tool_calls": []any{map[string]any{"name": "completePlan", "arguments": map[string]string{"status": "completed", "summary": "all done"}}}},
			map[string]any{"content": id + " finished."})
		agents[id] = script
	}
	sc := writeScenario(t, mustJSON(t, map[string]any{"name": "a root waiting on its children",
		"input":  map[string]any{"prompt": "Delegate.", "todo": quiet},
		"model":  []any{map[string]any{"tool_calls": spawns}, map[string]any{"content": "They are at work."}},
		"agents": agents}))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	id := "measure-root-waiting"
	run, err := s.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: api.TaskQueue}, api.WorkflowName, sc.RunInput())
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 4*time.Minute, "every subagent's end", func() bool {
		st, ok := queryState(ctx, s.c, id)
		if !ok || len(st.Subagents) != children {
			return false
		}
		for _, sub := range st.Subagents {
			if sub.Status != api.StatusCompleted {
				return false
			}
		}
		return true
	})
	if err := s.c.SignalWorkflow(ctx, id, "", api.EndSessionSignal, nil); err != nil {
		t.Fatal(err)
	}
	if err := run.Get(ctx, nil); err != nil {
		t.Fatalf("run: %v", err)
	}
	runs, err := runsOf(ctx, s.c, id)
	if err != nil {
		t.Fatal(err)
	}
	var maxEvents, maxBytes, total int
	for _, r := range runs {
		events, bytes := 0, 0
		it := s.c.GetWorkflowHistory(ctx, id, r, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			events++
			bytes += historyBytes([]*historypb.HistoryEvent{ev})
		}
		maxEvents, maxBytes, total = max(maxEvents, events), max(maxBytes, bytes), total+bytes
	}
	st, _ := queryState(ctx, s.c, id)
	t.Logf("MEASURE root-waiting-on-children: children=%d plan_events=%d root_runs=%d largest_run_events=%d largest_run_bytes=%d root_bytes=%d",
		children, st.EventsTotal, len(runs), maxEvents, maxBytes, total)
	withinCIBound(t, "the root's largest run (events)", float64(maxEvents), 400, "213; before the handover 605")
	withinCIBound(t, "the root's largest run (bytes)", float64(maxBytes), 280_000, "137,065; before 312,957")
}
