package testsuite

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/proto"
)

// TestMeasureHistoryPerEventTenSiblings: the history a tree of ten sibling
// subagents writes per plan event. The root spawns ten subagents in one
// response and ends; each subagent creates and starts a plan of five steps
// and works them one by one, each set in_progress then completed (13 plan
// events each: plan_created, plan_started, 5 step_started, 5 step_completed,
// plan_completed). Summed over
// every workflow execution of the tree (root and children, every run): the
// history bytes (proto size of each history event) and events, divided by
// the plan events the agents emitted themselves. Opt-in:
//
//	TODOFLOW_MEASURE=1 go test ./testsuite -run TestMeasureHistoryPerEventTenSiblings -count=1 -v
//
// Its counts take 9 s, so it runs in every `go test` too, each within its
// CI bound (below the design before the Briefs).
func TestMeasureHistoryPerEventTenSiblings(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.startWorker(t, t.TempDir())

	const siblings = 10
	steps := []string{"one", "two", "three", "four", "five"}
	var spawns []any
	agents := map[string]any{}
	for i := 1; i <= siblings; i++ {
		id := fmt.Sprintf("worker%d", i)
		spawns = append(spawns, map[string]any{"name": "spawn_subagent",
			"arguments": map[string]string{"agent_id": id, "task": "Work through five steps."}})
		script := []any{
			map[string]any{"tool_calls": []any{map[string]any{"name": "createPlan", "arguments": map[string]any{"title": "Work " + id, "steps": steps}}}},
			map[string]any{"tool_calls": []any{map[string]any{"name": "startPlan", "arguments": map[string]any{}}}},
		}
		for j := range steps {
			step := fmt.Sprintf("step_%d", j+1)
			script = append(script,
				map[string]any{"tool_calls": []any{map[string]any{"name": "setStepStatus",
					"arguments": map[string]string{"step_id": step, "status": "in_progress"}}}},
				map[string]any{"tool_calls": []any{map[string]any{"name": "setStepStatus",
					"arguments": map[string]string{"step_id": step, "status": "completed", "result": "done " + steps[j]}}}})
		}
		script = append(script,
			map[string]any{"tool_calls": []any{map[string]any{"name": "completePlan", "arguments": map[string]string{"status": "completed", "summary": "all done"}}}},
			map[string]any{"content": id + " finished."})
		agents[id] = script
	}
	// One response spawns the ten, the next ends the turn; with no user
	// action left the player sends end_session, and the root waits for its
	// children before it completes.
	root := []any{
		map[string]any{"tool_calls": spawns},
		map[string]any{"content": "All ten are at work."},
	}
	sc := writeScenario(t, mustJSON(t, map[string]any{"name": "ten siblings, history per event", "time_limit_s": 240,
		"input": map[string]any{"prompt": "Delegate to ten workers.", "todo": map[string]any{"plan_approval": "auto"}},
		"model": root, "agents": agents}))
	start := time.Now()
	out, st := play(t, s.c, sc, 5*time.Minute)
	elapsed := time.Since(start)
	if out.RunStatus != "completed" {
		t.Fatalf("run %s: %s", out.RunStatus, out.Error)
	}
	rootID := out.WorkflowID
	if len(st.Subagents) != siblings {
		t.Fatalf("%d subagents in the root's state, want %d", len(st.Subagents), siblings)
	}

	// The executions of the tree: the root, and every child workflow id the
	// root's history started or its state lists (all "<root id>/…").
	rootEvents := historyOf(t, s.c, rootID)
	ids := []string{}
	for _, ev := range rootEvents {
		if a := ev.GetChildWorkflowExecutionStartedEventAttributes(); a != nil {
			ids = append(ids, a.GetWorkflowExecution().GetWorkflowId())
		}
	}
	for id := range st.Subagents {
		ids = append(ids, rootID+"/"+id)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for _, id := range ids {
		if !strings.HasPrefix(id, rootID+"/") {
			t.Fatalf("child workflow %s is not under %s/", id, rootID)
		}
	}
	if len(ids) != siblings {
		t.Fatalf("%d child workflows (%v), want %d", len(ids), ids, siblings)
	}

	ctx := context.Background()
	type execution struct {
		id     string
		events []*historypb.HistoryEvent
		runs   int
		own    int // plan events of its own shown in its state
	}
	execs := []execution{{id: rootID, events: rootEvents}}
	for _, id := range ids {
		execs = append(execs, execution{id: id, events: historyOf(t, s.c, id)})
	}

	var totalBytes, totalEvents, runs, serverBytes int
	var signals, signalBytes int // task_event signals received, tree-wide
	var rootSignals, rootSignalMax int
	var sent, undelivered int // signals to other workflows of the tree, and those that found no running receiver
	for i := range execs {
		e := &execs[i]
		rs, err := runsOf(ctx, s.c, e.id)
		if err != nil {
			t.Fatal(err)
		}
		e.runs = len(rs)
		runs += len(rs)
		for _, run := range rs {
			d, err := s.c.DescribeWorkflowExecution(ctx, e.id, run)
			if err != nil {
				t.Fatalf("describe %s: %v", e.id, err)
			}
			serverBytes += int(d.GetWorkflowExecutionInfo().GetHistorySizeBytes())
		}
		totalBytes += historyBytes(e.events)
		totalEvents += len(e.events)
		for _, ev := range e.events {
			switch ev.GetEventType() {
			case enumspb.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED:
				sent++
			case enumspb.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_FAILED:
				undelivered++
			}
			a := ev.GetWorkflowExecutionSignaledEventAttributes()
			if a == nil || a.GetSignalName() != api.TaskEventSignal {
				continue
			}
			n := proto.Size(a.GetInput())
			signals++
			signalBytes += n
			if i == 0 {
				rootSignals++
				rootSignalMax = max(rootSignalMax, n)
			}
		}
	}

	// The plan events each agent emitted itself: the events of its own
	// state (queried from its own run) whose agent_id is its own. A state
	// shows at most the latest 100 events; a log longer than that (received
	// events included) is counted from the root's log instead, which keeps
	// every event of the root's children in both designs.
	planEvents := 0
	exact := true
	for i := range execs {
		e := &execs[i]
		ast, ok := queryState(ctx, s.c, e.id)
		if !ok {
			t.Fatalf("state query of %s failed", e.id)
		}
		// An agent without a plan has no events of its own (the root's
		// log, longer than a state shows, holds only its children's).
		if ast.Plan != nil && len(ast.Events) < ast.EventsTotal {
			exact = false
		}
		for _, ev := range ast.Events {
			if ev.AgentID == ast.AgentID {
				planEvents++
				e.own++
			}
		}
	}
	if st.Plan != nil {
		t.Fatalf("the root made a plan: its own events would mix with its children's")
	}
	if !exact {
		t.Logf("a state shows fewer events than its log holds; plan events counted from the root's log (events_total %d) instead of %d", st.EventsTotal, planEvents)
		planEvents = st.EventsTotal
	} else if planEvents != st.EventsTotal {
		t.Errorf("the agents emitted %d events of their own, the root's log holds %d", planEvents, st.EventsTotal)
	}
	if planEvents == 0 {
		t.Fatal("no plan event was emitted")
	}

	rootBytes := historyBytes(rootEvents)
	t.Logf("MEASURE tree-history-10-siblings: executions=%d runs=%d plan_events=%d history_bytes=%d history_events=%d bytes_per_plan_event=%.0f history_events_per_plan_event=%.2f root_history_bytes=%d root_bytes_per_child_event=%.0f max_root_task_event_signal_bytes=%d root_task_event_signals=%d tree_task_event_signals=%d tree_task_event_signal_bytes=%d tree_signals_sent=%d tree_signals_undelivered=%d server_history_size_bytes=%d elapsed=%s",
		len(execs), runs, planEvents, totalBytes, totalEvents,
		float64(totalBytes)/float64(planEvents), float64(totalEvents)/float64(planEvents),
		rootBytes, float64(rootBytes)/float64(planEvents), rootSignalMax, rootSignals, signals, signalBytes, sent, undelivered, serverBytes,
		elapsed.Round(time.Millisecond))
	for _, e := range execs {
		t.Logf("  %s: %d runs, %d history events, %d bytes, %d own plan events", e.id, e.runs, len(e.events), historyBytes(e.events), e.own)
	}
	withinCIBound(t, "history bytes per plan event", float64(totalBytes)/float64(planEvents), 10_000, "4,538; before the Briefs 12,213")
	withinCIBound(t, "history events per plan event", float64(totalEvents)/float64(planEvents), 30, "16.3; before 34.8")
	withinCIBound(t, "root history bytes per child event", float64(rootBytes)/float64(planEvents), 5_000, "1,653; before 7,313")
}
