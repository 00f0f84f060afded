package workflows

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/todo"
)

// A policy of "destructive" sends the calls marked for the worker to hold;
// a call the worker holds (its tool may destroy) waits for approval, then
// runs (approved) or is answered with the refusal (rejected); "remember"
// stops the holding of that tool for the session.
func TestToolApprovalDestructive(t *testing.T) {
	env, _ := approvalEnv(
		calls(call("drop", `{"table":"a"}`), call("lookup", `{}`), call("drop", `{"table":"b"}`), call("count", `{}`)),
		calls(call("drop", `{"table":"c"}`)),
		calls(call("drop", `{"table":"d"}`)),
		say("done"))
	var mu sync.Mutex
	var sent []string // "call id hold|run"
	env.RegisterActivityWithOptions(func(_ context.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
		mu.Lock()
		defer mu.Unlock()
		sent = append(sent, fmt.Sprintf("%s %v", in.Call.ID, in.HoldDestructive))
		if in.HoldDestructive && in.Call.Name == "drop" {
			return activities.RunToolResult{Held: true, Content: "drop may destroy"}, nil
		}
		return activities.RunToolResult{Content: "ran " + in.Call.Name}, nil
	}, activity.RegisterOptions{Name: activities.RunToolName, DisableAlreadyRegisteredCheck: true})

	var first State
	env.RegisterDelayedCallback(func() {
		first = queryState(t, env)
		approveTool(t, env, ToolApprovalArgs{Approved: yes(), CallID: "c1a"}, nil)
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		approveTool(t, env, ToolApprovalArgs{Approved: no(), Feedback: "keep b", CallID: "c1c"}, nil)
	}, 2*time.Hour)
	env.RegisterDelayedCallback(func() {
		approveTool(t, env, ToolApprovalArgs{Approved: yes(), Remember: true, CallID: "c2a"}, nil)
	}, 3*time.Hour)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(EndSessionSignal, nil) }, 4*time.Hour)
	env.ExecuteWorkflow(AgentWorkflow, approvalInput(todo.ToolApproval{"*": todo.ApprovalDestructive, "count": todo.ApprovalAuto}))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}

	if first.Status != StatusAwaitingApproval || first.PendingApproval == nil || first.PendingApproval.CallID != "c1a" ||
		first.PendingApproval.Tool != "drop" || string(first.PendingApproval.Arguments) != `{"table":"a"}` {
		t.Errorf("state while the held call waits = %s", dump(first))
	}
	mu.Lock()
	slices.Sort(sent)
	got := strings.Join(sent, ", ")
	mu.Unlock()
	// c1d is "auto": never held. c3a is remembered: not held.
	want := "c1a false, c1a true, c1b true, c1c true, c1d false, c2a false, c2a true, c3a false"
	if got != want {
		t.Errorf("calls sent (id, hold) = %s\nwant %s", got, want)
	}
	msgs := queryMessages(t, env)
	for id, want := range map[string]string{
		"c1a": "ran drop", "c1b": "ran lookup", "c1d": "ran count", "c2a": "ran drop", "c3a": "ran drop",
		"c1c": "Not run: the user rejected this call of drop. Their feedback: keep b",
	} {
		if m, ok := toolAnswer(msgs, id); !ok || m.Content != want {
			t.Errorf("answer to %s = %+v, want %q", id, m, want)
		}
	}
}
