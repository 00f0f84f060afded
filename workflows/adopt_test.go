package workflows

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// handedOverWithKid plays a root that spawns kid, whose work takes a day,
// on a server that suggests continuing as new: the root hands over at the
// end of its turn with kid running, and the carry names kid for the
// continuation to adopt.
func handedOverWithKid(t *testing.T) handover {
	t.Helper()
	env := newTreeEnv()
	scriptTree(env, map[string][]model.Response{
		"main": {calls(spawnCall("kid", "work for a day", quiet)), say("kid is on it")},
		"kid":  {say("done")},
	}, late{"kid", 1, 24 * time.Hour})
	env.SetContinueAsNewSuggested(true)
	env.ExecuteWorkflow(api.WorkflowName, rootInput("go"))
	next := continuedWith(t, env)
	c := next.Carry
	if c == nil || len(c.Tree.Running) != 1 || c.Tree.Running[0].AgentID != "kid" || c.Tree.Running[0].WorkflowID != childWF("kid") {
		t.Fatalf("carry.running = %v, want kid", dump(c))
	}
	if c.Tree.Running[0].Deadline.IsZero() {
		t.Fatalf("kid's deadline was not carried")
	}
	if c.Tree.Subagents["kid"].Status != "" {
		t.Fatalf("kid is carried as finished: %v", dump(c.Tree.Subagents["kid"]))
	}
	return next
}

// TestChildCrossesContinueAsNew: a root that waits with a child running
// continues as new when the server suggests it (before, it did only with
// no child running, so a tree that worked for days grew its root's history
// without bound); the continuation adopts the child and learns its end
// from its tree_end, with the summary the child sent.
func TestChildCrossesContinueAsNew(t *testing.T) {
	next := handedOverWithKid(t)
	env := newTreeEnv()
	scriptTree(env, map[string][]model.Response{"main": {say("kid finished")}})
	var running api.State
	env.RegisterDelayedCallback(func() { running = queryState(t, env) }, time.Minute)
	final := api.State{AgentID: "kid", Status: api.StatusCompleted, Turns: 1, ModelCalls: 3, Todos: []todo.Item{{ID: "1", Content: "work", Status: todo.Completed}}}
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(EndSignal, End{AgentID: "kid", How: api.StatusCompleted, Final: &final, Reply: "the day's work", Key: next.Carry.Tree.Key})
	}, 2*time.Hour)
	var ended api.State
	env.RegisterDelayedCallback(func() { ended = queryState(t, env) }, 3*time.Hour)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 4*time.Hour)
	env.SetContinuedExecutionRunID("the-run-before")
	env.ExecuteWorkflow(api.WorkflowName, asInput(t, next))
	completed(t, env)

	if kid := running.Subagents["kid"]; kid.Status != api.StatusRunning {
		t.Errorf("adopted kid before its end = %s, want running", dump(kid))
	}
	kid := ended.Subagents["kid"]
	if kid.Status != api.StatusCompleted || kid.ModelCalls != 3 || len(kid.Todos) != 1 {
		t.Errorf("adopted kid after its tree_end = %s, want the summary it sent", dump(kid))
	}
}

// TestAdoptedChildThatDiesSilently: an adopted child that the server ends
// at its deadline sends nothing; its parent takes it as timed out once the
// deadline passed, and the wind-down does not wait for it for ever.
func TestAdoptedChildThatDiesSilently(t *testing.T) {
	next := handedOverWithKid(t)
	env := newTreeEnv()
	scriptTree(env, nil)
	var before, after api.State
	deadline := next.Carry.Tree.Running[0].Deadline
	env.SetStartTime(deadline.Add(-30 * time.Minute))
	env.RegisterDelayedCallback(func() { before = queryState(t, env) }, 29*time.Minute)
	env.RegisterDelayedCallback(func() { after = queryState(t, env) }, 32*time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 40*time.Minute)
	env.SetContinuedExecutionRunID("the-run-before")
	env.ExecuteWorkflow(api.WorkflowName, asInput(t, next))
	completed(t, env)

	if kid := before.Subagents["kid"]; kid.Status != api.StatusRunning {
		t.Errorf("kid before its deadline = %s, want running", dump(kid))
	}
	if kid := after.Subagents["kid"]; kid.Status != api.StatusFailed {
		t.Errorf("kid after its deadline = %s, want failed", dump(kid))
	}
}

// TestAdoptedChildCancelledAtGrace: end_session asks an adopted child to
// finish and, at subagent_grace_s, cancels it by its workflow id; a child
// that cannot be found (terminated by hand) is recorded as ended at once
// instead of holding the wind-down until its deadline.
func TestAdoptedChildCancelledAtGrace(t *testing.T) {
	next := handedOverWithKid(t)
	env := newTreeEnv()
	scriptTree(env, nil)
	var finishAsked int
	env.OnSignalExternalWorkflow(mock.Anything, childWF("kid"), "", HandSignal, mock.Anything).Return(
		func(_, _, _, _ string, h any) error {
			if h.(Handed).Finish != nil {
				finishAsked++
			}
			return nil
		})
	var cancelAsked int
	env.OnRequestCancelExternalWorkflow(mock.Anything, childWF("kid"), "").Return(func(_, _, _ string) error {
		cancelAsked++
		return errors.New("workflow not found")
	})
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, time.Minute)
	env.SetContinuedExecutionRunID("the-run-before")
	env.ExecuteWorkflow(api.WorkflowName, asInput(t, next))
	completed(t, env)

	if finishAsked != 1 || cancelAsked != 1 {
		t.Errorf("kid was asked to finish %d times and cancelled %d times, want 1 and 1", finishAsked, cancelAsked)
	}
	if kid := queryState(t, env).Subagents["kid"]; kid.Status != api.StatusFailed {
		t.Errorf("kid = %s, want failed", dump(kid))
	}
}

// TestCancelledRunCancelsItsChildren: with children outliving the run that
// started them (childPolicy), a run that is cancelled asks its running
// children, adopted ones included, to cancel itself.
func TestCancelledRunCancelsItsChildren(t *testing.T) {
	next := handedOverWithKid(t)
	env := newTreeEnv()
	scriptTree(env, nil)
	var cancelAsked int
	env.OnRequestCancelExternalWorkflow(mock.Anything, childWF("kid"), "").Return(func(_, _, _ string) error {
		cancelAsked++
		return nil
	})
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Minute)
	env.SetContinuedExecutionRunID("the-run-before")
	env.ExecuteWorkflow(api.WorkflowName, asInput(t, next))
	if err := env.GetWorkflowError(); err == nil || !strings.Contains(err.Error(), "canceled") {
		t.Fatalf("run ended with %v, want cancelled", err)
	}
	if cancelAsked != 1 {
		t.Errorf("kid was cancelled %d times, want 1", cancelAsked)
	}
}

// TestHandOverInTheMiddleOfAWait: a root waiting for its user while its
// child works hands over as soon as the server suggests it, or its history
// reaches its caps on a server that does not suggest it, in the middle of
// the wait, not at the next turn, which may never come.
func TestHandOverInTheMiddleOfAWait(t *testing.T) {
	for _, tt := range []struct {
		name string
		grow func(testEnv)
	}{
		{"suggested", func(env testEnv) { env.SetContinueAsNewSuggested(true) }},
		{"events", func(env testEnv) { env.SetCurrentHistoryLength(MaxHistoryEvents) }},
		{"bytes", func(env testEnv) { env.SetCurrentHistorySize(MaxHistoryBytes) }},
	} {
		t.Run(tt.name, func(t *testing.T) { handOverInAWait(t, tt.grow) })
	}
}

func handOverInAWait(t *testing.T, grow func(testEnv)) {
	env := newTreeEnv()
	scriptTree(env, map[string][]model.Response{
		"main": {calls(spawnCall("kid", "work for a day", quiet)), say("kid is on it")},
		"kid":  {say("done")},
	}, late{"kid", 1, 24 * time.Hour})
	var waiting api.State
	env.RegisterDelayedCallback(func() {
		waiting = queryState(t, env)
		grow(env)
		// What made the history long: the child's news.
		env.SignalWorkflow(api.TaskEventSignal, Events{Of: "kid", Brief: &api.Brief{Status: api.StatusRunning, Turns: 1}})
	}, time.Hour)
	env.ExecuteWorkflow(api.WorkflowName, rootInput("go"))
	next := continuedWith(t, env)

	if waiting.Status != api.StatusWaitingUser {
		t.Fatalf("before the suggestion the root is %s, want waiting_user", waiting.Status)
	}
	c := next.Carry
	if c.Session.Turns != 1 || len(c.Inbox.Queue) != 0 || len(c.Tree.Running) != 1 {
		t.Errorf("carry: %d turns, inbox %v, running %v; want the one turn, no message, kid running", c.Session.Turns, c.Inbox.Queue, c.Tree.Running)
	}
	if b := c.Tree.Briefs["kid"]; b == nil || b.Status != api.StatusRunning {
		t.Errorf("kid's last brief was not carried: %s", dump(c.Tree.Briefs))
	}
}

// TestBlockedTurnCrossesContinueAsNew: a turn that waits on a plan step
// blocked by a subagent's work is handed over in the middle of that wait
// (its model calls counted), and the continuation takes it up: when the
// step fails with the subagent's end, the model hears of it and the turn
// ends with its answer.
func TestBlockedTurnCrossesContinueAsNew(t *testing.T) {
	env := newTreeEnv()
	scriptTree(env, reviewOfKid("work for a day"), late{"kid", 1, 24 * time.Hour})
	env.RegisterDelayedCallback(func() {
		if st := queryState(t, env); st.Status != api.StatusBlocked {
			t.Errorf("after an hour the root is %s, want blocked", st.Status)
		}
		env.SetContinueAsNewSuggested(true)
		env.SignalWorkflow(api.TaskEventSignal, Events{Of: "kid", Brief: &api.Brief{Status: api.StatusRunning}})
	}, time.Hour)
	env.ExecuteWorkflow(api.WorkflowName, rootInput("go"))
	next := continuedWith(t, env)
	c := next.Carry
	if len(c.Inbox.Queue) != 1 || c.Inbox.Queue[0].Blocked == nil || c.Inbox.Queue[0].Blocked.Calls != 5 || c.Session.Turns != 1 {
		t.Fatalf("carry: inbox %s, %d turns; want the blocked turn after 5 calls, 1 turn", dump(c.Inbox.Queue), c.Session.Turns)
	}

	env = newTreeEnv()
	tm := scriptTree(env, nil)
	tm.hook = func(in activities.CallModelInput) (model.Response, bool) {
		return say("kid failed; the review is off."), true
	}
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(EndSignal, End{AgentID: "kid", How: "failed: out of disk", Key: next.Carry.Tree.Key})
	}, time.Hour)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 2*time.Hour)
	env.SetContinuedExecutionRunID("the-run-before")
	env.ExecuteWorkflow(api.WorkflowName, asInput(t, next))
	completed(t, env)
	st := queryState(t, env)
	if st.Turns != 1 || st.ModelCalls != 7 {
		t.Errorf("after the handed turn: %d turns, %d model calls; want 1 and 7 (6, then 1 once the step failed)", st.Turns, st.ModelCalls)
	}
	if s := step(t, st.Plan, "step_2"); s.Status != todo.StepFailed {
		t.Errorf("the step on kid = %s, want failed", dump(s))
	}
	var res api.AgentResult
	if err := env.GetWorkflowResult(&res); err != nil || res.Reply != "kid failed; the review is off." {
		t.Errorf("reply %q (%v), want the answer after the step failed", res.Reply, err)
	}
}

// TestSubagentStopsWhenItsRootIsGone: subagents outlive a root terminated
// by hand (childPolicy); one whose message to the root finds it gone stops,
// as if cancelled, instead of working on for no one until its timeout.
func TestSubagentStopsWhenItsRootIsGone(t *testing.T) {
	env := newTreeEnv()
	tm := scriptTree(env, map[string][]model.Response{
		"main": {calls(spawnCall("kid", "work for a day", quiet)), say("kid is on it")},
		"kid":  {say("done")},
	}, late{"kid", 1, 24 * time.Hour})
	// Every message of kid to the root finds no root (the root's own run,
	// which the test environment cannot terminate, goes on to see kid end).
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{&rootGone{}}})
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 48*time.Hour)
	env.ExecuteWorkflow(api.WorkflowName, rootInput("go"))
	completed(t, env)
	st := queryState(t, env)
	if kid := st.Subagents["kid"]; kid.Status != api.StatusFailed {
		t.Errorf("kid = %s, want failed (stopped)", dump(kid))
	}
	if n := len(tm.inputs("kid")); n > 1 {
		t.Errorf("kid made %d model calls after its root was gone, want at most the one in flight", n)
	}
}

// rootGone makes every subagent's signal to the root fail as a signal to a
// closed workflow does.
type rootGone struct {
	interceptor.WorkerInterceptorBase
}

func (*rootGone) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &rootGoneInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}}
}

type rootGoneInbound struct {
	interceptor.WorkflowInboundInterceptorBase
}

func (i *rootGoneInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&rootGoneOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: outbound}})
}

type rootGoneOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
}

func (o *rootGoneOutbound) SignalExternalWorkflow(ctx workflow.Context, workflowID, runID, name string, arg any) workflow.Future {
	if workflowID != treeRoot || workflow.GetInfo(ctx).WorkflowExecution.ID == treeRoot {
		return o.Next.SignalExternalWorkflow(ctx, workflowID, runID, name, arg)
	}
	f, set := workflow.NewFuture(ctx)
	set.SetError(&temporal.UnknownExternalWorkflowExecutionError{})
	return f
}
