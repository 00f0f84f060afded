package workflows

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/activity"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// A policy of "destructive" sends the calls marked for the worker to hold;
// a call the worker holds (its tool may destroy) waits for approval, then
// runs (approved) or is answered with the refusal (rejected); "remember"
// stops the holding of that tool for the session.
func TestToolApprovalDestructive(t *testing.T) {
	env, sent := holdingEnv(
		calls(call("drop", `{"table":"a"}`), call("lookup", `{}`), call("drop", `{"table":"b"}`), call("count", `{}`)),
		calls(call("drop", `{"table":"c"}`)),
		calls(call("drop", `{"table":"d"}`)),
		say("done"))

	var first api.State
	env.RegisterDelayedCallback(func() {
		first = queryState(t, env)
		approveTool(t, env, api.ToolApprovalArgs{Approved: yes(), CallID: "c1a"}, nil)
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		approveTool(t, env, api.ToolApprovalArgs{Approved: no(), Feedback: "keep b", CallID: "c1c"}, nil)
	}, 2*time.Hour)
	env.RegisterDelayedCallback(func() {
		approveTool(t, env, api.ToolApprovalArgs{Approved: yes(), Remember: true, CallID: "c2a"}, nil)
	}, 3*time.Hour)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 4*time.Hour)
	env.ExecuteWorkflow(AgentWorkflow, approvalInput(todo.ToolApproval{"*": todo.ApprovalDestructive, "count": todo.ApprovalAuto}))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}

	if first.Status != api.StatusAwaitingApproval || first.PendingApproval == nil || first.PendingApproval.CallID != "c1a" ||
		first.PendingApproval.Tool != "drop" || string(first.PendingApproval.Arguments) != `{"table":"a"}` {
		t.Errorf("state while the held call waits = %s", dump(first))
	}
	// c1d is "auto": never held. c3a is remembered: not held.
	want := "c1a false, c1a true, c1b true, c1c true, c1d false, c2a false, c2a true, c3a false"
	if got := sent(); got != want {
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

// holdingEnv is an approval environment whose worker holds every call of
// drop sent to be held, and records what it is sent ("id hold").
func holdingEnv(responses ...model.Response) (testEnv, func() string) {
	env, _ := approvalEnv(responses...)
	var mu sync.Mutex
	var sent []string
	env.RegisterActivityWithOptions(func(_ context.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
		mu.Lock()
		defer mu.Unlock()
		sent = append(sent, fmt.Sprintf("%s %v", in.Call.ID, in.HoldDestructive))
		if in.HoldDestructive && in.Call.Name == "drop" {
			return activities.RunToolResult{Held: true, Content: "drop may destroy"}, nil
		}
		return activities.RunToolResult{Content: "ran " + in.Call.Name}, nil
	}, activity.RegisterOptions{Name: api.ToolActivity, DisableAlreadyRegisteredCheck: true})
	return env, func() string {
		mu.Lock()
		defer mu.Unlock()
		slices.Sort(sent)
		return strings.Join(sent, ", ")
	}
}

// A wait for the approval of a call the worker held crosses
// continue-as-new: the response's other calls run and are answered in the
// run, the held calls are carried by id, and the continuation asks for
// each again, in call order, and runs or refuses it before it calls the
// model.
func TestHeldCallWaitCrossesContinueAsNew(t *testing.T) {
	policy := todo.ToolApproval{"*": todo.ApprovalDestructive, "count": todo.ApprovalAuto}
	env, sent := holdingEnv(calls(call("drop", `{"table":"a"}`), call("lookup", `{}`), call("drop", `{"table":"b"}`), call("count", `{}`)))
	env.RegisterDelayedCallback(func() {
		if st := queryState(t, env); st.PendingApproval == nil || st.PendingApproval.CallID != "c1a" {
			t.Errorf("the held wait: %s", dump(st.PendingApproval))
		}
		env.SetContinueAsNewSuggested(true)
		env.SignalWorkflow(api.TaskEventSignal, Events{Of: "nobody", Brief: &api.Brief{Status: api.StatusRunning}})
	}, time.Hour)
	env.ExecuteWorkflow(AgentWorkflow, approvalInput(policy))
	next := continuedWith(t, env)
	if got, want := sent(), "c1a true, c1b true, c1c true, c1d false"; got != want {
		t.Errorf("the first run sent %s; want %s", got, want)
	}
	c := next.Carry
	if len(c.Inbox.Queue) != 1 || c.Inbox.Queue[0].Blocked == nil || strings.Join(c.Inbox.Queue[0].Blocked.Held, ",") != "c1a,c1c" {
		t.Fatalf("carry: inbox %s; want the turn with c1a and c1c held", dump(c.Inbox.Queue))
	}
	answered := map[string]bool{}
	for _, m := range c.Window.Messages {
		if m.Role == model.RoleTool {
			answered[m.ToolCallID] = true
		}
	}
	if !answered["c1b"] || !answered["c1d"] || answered["c1a"] || answered["c1c"] {
		t.Fatalf("carried answers %v; want c1b and c1d only", answered)
	}

	env, sent = holdingEnv(say("(call 1, of the first run)"), say("done"))
	var first, second api.State
	env.RegisterDelayedCallback(func() {
		first = queryState(t, env)
		approveTool(t, env, api.ToolApprovalArgs{Approved: yes(), CallID: "c1a"}, nil)
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		second = queryState(t, env)
		approveTool(t, env, api.ToolApprovalArgs{Approved: no(), Feedback: "keep b", CallID: "c1c"}, nil)
	}, 2*time.Hour)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 3*time.Hour)
	env.SetContinuedExecutionRunID("the-run-before")
	env.ExecuteWorkflow(AgentWorkflow, asInput(t, next))
	completed(t, env)
	if first.PendingApproval == nil || first.PendingApproval.CallID != "c1a" || second.PendingApproval == nil || second.PendingApproval.CallID != "c1c" {
		t.Errorf("the continuation asked for %s, then %s; want c1a, then c1c", dump(first.PendingApproval), dump(second.PendingApproval))
	}
	if got := sent(); got != "c1a false" {
		t.Errorf("the continuation sent %s; want the approved drop only, not to be held", got)
	}
	msgs := queryMessages(t, env)
	for id, want := range map[string]string{
		"c1a": "ran drop", "c1b": "ran lookup", "c1d": "ran count",
		"c1c": "Not run: the user rejected this call of drop. Their feedback: keep b",
	} {
		if m, ok := toolAnswer(msgs, id); !ok || m.Content != want {
			t.Errorf("answer to %s = %+v, want %q", id, m, want)
		}
	}
	if st := queryState(t, env); st.ModelCalls != 2 || st.Turns != 1 {
		t.Errorf("%d model calls in %d turns; want 2 in 1", st.ModelCalls, st.Turns)
	}
}

// A response whose startPlan and a held call both wait when the handover
// comes carries both: the continuation asks for the held call, then waits
// for the plan's verdict, tells it to the model, and calls the model.
func TestHeldCallAndPlanApprovalCrossTogether(t *testing.T) {
	policy := todo.ToolApproval{"drop": todo.ApprovalDestructive}
	env, _ := holdingEnv(
		calls(call("createPlan", `{"title":"Clean up","steps":["drop a"]}`)),
		calls(call("startPlan", `{}`), call("drop", `{"table":"a"}`)))
	env.RegisterDelayedCallback(func() {
		env.SetContinueAsNewSuggested(true)
		env.SignalWorkflow(api.TaskEventSignal, Events{Of: "nobody", Brief: &api.Brief{Status: api.StatusRunning}})
	}, time.Hour)
	env.ExecuteWorkflow(AgentWorkflow, approvalInput(policy))
	next := continuedWith(t, env)
	in := next.Carry.Inbox.Queue
	if len(in) != 1 || in[0].Blocked == nil || strings.Join(in[0].Blocked.Held, ",") != "c2b" || !in[0].Blocked.Approval {
		t.Fatalf("carry: inbox %s; want the held drop and the plan's wait", dump(in))
	}

	env, sent := holdingEnv(say("(call 1)"), say("(call 2)"), say("done"))
	var plan api.State
	env.RegisterDelayedCallback(func() {
		if st := queryState(t, env); len(st.Waiting) != 2 {
			t.Errorf("the waits shown: %s; want the held call's and the plan's", dump(st.Waiting))
		}
		approveTool(t, env, api.ToolApprovalArgs{Approved: yes(), CallID: "c2b"}, nil)
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		plan = queryState(t, env)
		approve(env, t, true, "", nil)
	}, 2*time.Hour)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 3*time.Hour)
	env.SetContinuedExecutionRunID("the-run-before")
	env.ExecuteWorkflow(AgentWorkflow, asInput(t, next))
	completed(t, env)
	if got := sent(); got != "c2b false" {
		t.Errorf("the continuation sent %s; want the approved drop", got)
	}
	if !plan.AwaitingApproval {
		t.Errorf("after the held call, the continuation does not wait for the plan: %s", plan.Status)
	}
	msgs := queryMessages(t, env)
	if m, ok := toolAnswer(msgs, "c2b"); !ok || m.Content != "ran drop" {
		t.Errorf("c2b answered %+v", m)
	}
	if !slices.ContainsFunc(msgs, func(m model.Message) bool { return m.Name == api.NamePlanVerdict }) {
		t.Error("the model was not told the plan's verdict")
	}
	if st := queryState(t, env); st.ModelCalls != 3 {
		t.Errorf("%d model calls; want 3", st.ModelCalls)
	}
}
