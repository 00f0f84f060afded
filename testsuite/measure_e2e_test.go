package testsuite

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"
)

// The measurements of BENCHMARKS.md: TODOFLOW_MEASURE=1 go test ./testsuite
// -run Measure -v. Those whose counts take seconds run in every `go test`
// too, within loose bounds (withinCIBound); measureOnly skips the ones that
// take minutes.
func measureOnly(t *testing.T) {
	if os.Getenv("TODOFLOW_MEASURE") == "" {
		t.Skip("a measurement; set TODOFLOW_MEASURE=1 to run it")
	}
}

// withinCIBound fails t when a figure that BENCHMARKS.md cites (cited, as
// the page words it) is over its loose bound. The figures are counts (events,
// bytes), not times, so a bound of about twice the figure never trips on a
// slow machine, and still catches the design it replaced (the "before" of
// its table) or a growth of that order.
func withinCIBound(t *testing.T, what string, got, bound float64, cited string) {
	t.Helper()
	if got > bound {
		t.Errorf("%s is %.0f, over its CI bound of %.0f (BENCHMARKS.md cites %s)", what, got, bound, cited)
	}
}

// historyOf returns every event of every run of a workflow id, oldest first.
func historyOf(t *testing.T, c client.Client, id string) []*historypb.HistoryEvent {
	t.Helper()
	ctx := context.Background()
	runs, err := runsOf(ctx, c, id)
	if err != nil {
		t.Fatal(err)
	}
	var all []*historypb.HistoryEvent
	for _, run := range runs {
		it := c.GetWorkflowHistory(ctx, id, run, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, ev)
		}
	}
	return all
}

func historyBytes(evs []*historypb.HistoryEvent) int {
	n := 0
	for _, ev := range evs {
		n += proto.Size(ev)
	}
	return n
}

// TestMeasureChatTurns: history bytes and events per chat turn at turns 10,
// 100 and 500 of one session (scripted model, a write_todos and a reply per
// turn), continue-as-new included. Without TODOFLOW_MEASURE it plays 100
// turns (10 s), and turns 10 and 100 must each stay within their CI bound,
// the later no dearer than twice the earlier; the 500 turns and their
// continue-as-new are for the measurement only.
func TestMeasureChatTurns(t *testing.T) {
	t.Parallel()
	turns, at := 100, []int{10, 100}
	if os.Getenv("TODOFLOW_MEASURE") != "" {
		turns, at = 500, []int{10, 100, 500}
	}
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	var model []any
	for i := 1; i <= turns; i++ {
		model = append(model,
			map[string]any{"tool_calls": []any{map[string]any{"name": "write_todos", "arguments": map[string]any{"todos": []any{
				map[string]string{"content": fmt.Sprintf("Answer message %d", i), "status": "completed"}}}}}},
			map[string]any{"content": fmt.Sprintf("Answer %d: done.", i)})
	}
	sc := writeScenario(t, mustJSON(t, map[string]any{"name": "500 turns", "input": map[string]any{}, "model": model}))
	ctx := context.Background()
	id := "measure-chat"
	if _, err := s.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: api.TaskQueue}, api.WorkflowName, sc.RunInput()); err != nil {
		t.Fatal(err)
	}
	type mark struct{ events, bytes int }
	marks := map[int]mark{}
	start := time.Now()
	for turn := 1; turn <= turns; turn++ {
		h, err := s.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: api.SendMessageUpdate,
			Args: []any{fmt.Sprintf("message %d", turn)}, WaitForStage: client.WorkflowUpdateStageCompleted})
		if err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		var reply string
		if err := h.Get(ctx, &reply); err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		if slices.Contains(at, turn) || slices.Contains(at, turn+1) {
			evs := historyOf(t, s.c, id)
			marks[turn] = mark{len(evs), historyBytes(evs)}
		}
	}
	elapsed := time.Since(start)
	runs, _ := runsOf(ctx, s.c, id)
	for _, turn := range at {
		m, prev := marks[turn], marks[turn-1]
		t.Logf("turn %d: this turn %d events, %d bytes; history so far %d events, %d bytes (%.0f bytes/turn on average)",
			turn, m.events-prev.events, m.bytes-prev.bytes, m.events, m.bytes, float64(m.bytes)/float64(turn))
		withinCIBound(t, fmt.Sprintf("turn %d's events", turn), float64(m.events-prev.events), 42, "21")
		withinCIBound(t, fmt.Sprintf("turn %d's history bytes", turn), float64(m.bytes-prev.bytes), 8_000, "3,476 to 3,514")
	}
	first, last := at[0], at[len(at)-1]
	withinCIBound(t, fmt.Sprintf("turn %d's bytes against turn %d's (×100)", last, first),
		100*float64(marks[last].bytes-marks[last-1].bytes)/float64(marks[first].bytes-marks[first-1].bytes), 200, "1.01 (×100: 101)")
	t.Logf("%d turns in %s, %d runs (continue-as-new)", turns, elapsed.Round(time.Second), len(runs))
	_ = s.c.SignalWorkflow(ctx, id, "", api.EndSessionSignal, nil)
}

// TestMeasurePayloadsWithTenSubagents: the largest carry, result and
// task_event payloads and the state query of a root with 10 subagents that
// each worked through a plan, continue-as-new included.
//
// Its counts take 8 s, so it runs in every `go test`, each within its CI
// bound.
func TestMeasurePayloadsWithTenSubagents(t *testing.T) {
	t.Parallel()
	s := startServerTB(t, "limit.historyCount.suggestContinueAsNew=200")
	s.startWorker(t, t.TempDir())
	root := []any{}
	agents := map[string]any{}
	for i := 1; i <= 10; i++ {
		id := fmt.Sprintf("worker%d", i)
		root = append(root, map[string]any{"tool_calls": []any{map[string]any{"name": "spawn_subagent",
			"arguments": map[string]string{"agent_id": id, "task": "Work through five steps."}}}})
		steps := []string{"one", "two", "three", "four", "five"}
		script := []any{
			map[string]any{"tool_calls": []any{map[string]any{"name": "createPlan", "arguments": map[string]any{"title": "Work " + id, "steps": steps}}}},
			map[string]any{"tool_calls": []any{map[string]any{"name": "startPlan", "arguments": map[string]any{}}}},
		}
		for j := range steps {
			script = append(script, map[string]any{"tool_calls": []any{map[string]any{"name": "setStepStatus",
				"arguments": map[string]string{"step_id": fmt.Sprintf("step_%d", j+1), "status": "completed", "result": "done " + steps[j]}}}})
		}
		script = append(script,
			map[string]any{"tool_calls": []any{map[string]any{"name": "completePlan", "arguments": map[string]string{"status": "completed", "summary": "all done"}}}},
			map[string]any{"content": id + " finished."})
		agents[id] = script
	}
	root = append(root, map[string]any{"content": "All ten are at work."})
	for i := 0; i < 6; i++ {
		root = append(root, map[string]any{"content": fmt.Sprintf("Still here (%d).", i)})
	}
	user := []any{}
	for i := 0; i < 6; i++ {
		user = append(user, map[string]any{"when": "waiting_user", "update": "send_message", "args": fmt.Sprintf("status %d?", i)})
	}
	sc := writeScenario(t, mustJSON(t, map[string]any{"name": "ten subagents", "time_limit_s": 240,
		"input": map[string]any{"prompt": "Delegate to ten workers.", "todo": map[string]any{"plan_approval": "auto"}},
		"model": root, "agents": agents, "user": user}))
	out, st := play(t, s.c, sc, 5*time.Minute)
	if out.RunStatus != "completed" {
		t.Fatalf("run %s: %s", out.RunStatus, out.Error)
	}
	var carry, result, signal int
	for _, ev := range historyOf(t, s.c, out.WorkflowID) {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
			carry = max(carry, proto.Size(ev.GetWorkflowExecutionContinuedAsNewEventAttributes().GetInput()))
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
			result = max(result, proto.Size(ev.GetWorkflowExecutionCompletedEventAttributes().GetResult()))
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
			signal = max(signal, proto.Size(ev.GetWorkflowExecutionSignaledEventAttributes().GetInput()))
		}
	}
	t.Logf("10 subagents: largest carry %d bytes, result %d bytes, task_event %d bytes; state query %d bytes; %d subagents in state, %d events (of %d)",
		carry, result, signal, len(out.State), len(st.Subagents), len(st.Events), st.EventsTotal)
	if len(st.Subagents) != 10 {
		t.Errorf("%d subagents in the state", len(st.Subagents))
	}
	withinCIBound(t, "the largest carry (bytes)", float64(carry), 160_000, "76,734")
	withinCIBound(t, "the result (bytes)", float64(result), 140_000, "67,542")
	withinCIBound(t, "the largest task_event (bytes)", float64(signal), 8_000, "1,990")
	withinCIBound(t, "the state query (bytes)", float64(len(out.State)), 140_000, "67,418")
}
