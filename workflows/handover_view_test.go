package workflows

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// What a client sees of a session right after it continued as new is what
// it saw before: the model the worker answered with (state.model, which
// prices the session in the chat) and the diffs of the tool results the
// continuation carries, before the continuation makes any call.
func TestHandoverKeepsTheModelAndTheDiffs(t *testing.T) {
	const served = "gpt-4o-mini-2024-07-18"
	diff := func(i int) string { return "@@ -1 +1 @@\n-old\n+new " + strings.Repeat("x", i) + "\n" }
	// Ten writes, each answered with its diff, then the reply: the run
	// keeps the latest maxKeptDiffs.
	var env *testsuite.TestWorkflowEnvironment
	var s testsuite.WorkflowTestSuite
	env = s.NewTestWorkflowEnvironment()
	const writes = 10
	env.RegisterActivityWithOptions(func(_ context.Context, in activities.CallModelInput) (model.Response, error) {
		if in.Call > writes {
			return model.Response{Content: "wrote them", Model: served}, nil
		}
		r := calls(call("write_file", `{"path":"f","content":"new"}`))
		r.ToolCalls[0].ID = callID(in.Call)
		r.Model = served
		return r, nil
	}, activity.RegisterOptions{Name: api.ModelCallActivity})
	env.RegisterActivityWithOptions(func(_ context.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
		return activities.RunToolResult{Content: "wrote f", Diff: diff(len(in.Call.ID))}, nil
	}, activity.RegisterOptions{Name: api.ToolActivity})
	registerHost(env)
	suggestAfterTurn(env)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "write f ten times", IdleTimeoutS: 3600, Todo: todo.Config{Enabled: new(false)}})
	next := continuedWith(t, env)
	if next.Carry.Session.Served != served {
		t.Errorf("the carry's served model is %q, want %q", next.Carry.Session.Served, served)
	}
	if n := len(next.Carry.Diffs); n != maxKeptDiffs || next.Carry.Diffs[n-1].CallID != callID(writes) {
		t.Errorf("the carry holds %d diffs (%+v), want the latest %d", n, next.Carry.Diffs, maxKeptDiffs)
	}

	// The continuation answers with them at once, before any model call.
	env = s.NewTestWorkflowEnvironment()
	seen := scripted(env)
	var st api.State
	var diffs map[string]string
	env.RegisterDelayedCallback(func() {
		st = queryState(t, env)
		v, err := env.QueryWorkflow(api.ToolDiffsQuery, []string{callID(1), callID(writes)})
		if err != nil || v.Get(&diffs) != nil {
			t.Errorf("tool_diffs: %v", err)
		}
		env.SignalWorkflow(api.EndSessionSignal, nil)
	}, time.Minute)
	env.SetContinuedExecutionRunID("the-run-before")
	env.ExecuteWorkflow(AgentWorkflow, asInput(t, next))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if len(*seen) != 0 {
		t.Fatalf("the continuation made %d model calls, want none", len(*seen))
	}
	if st.Model != served {
		t.Errorf("right after the handover state.model is %q, want %q", st.Model, served)
	}
	if len(diffs) != 1 || diffs[callID(writes)] != diff(len(callID(writes))) {
		t.Errorf("the continuation's tool_diffs answered %q; want the latest call's diff only (the first is older than those kept)", diffs)
	}
}

func callID(n int) string { return "call_" + string(rune('a'+n)) }
