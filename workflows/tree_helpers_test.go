package workflows

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"github.com/stretchr/testify/mock"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// The helpers of the run-tree tests (tree_test.go): a whole tree runs in one
// test environment, every subagent as a real child workflow, every agent's
// model calls answered by the same scripted CallModel by agent id.

// treeRoot is the root's workflow id in the test environment; a child's is
// treeRoot + "/" + its agent id.
const treeRoot = "default-test-workflow-id"

func childWF(agentID string) string { return treeRoot + "/" + agentID }

// treeModel answers every agent's model calls: call N of agent A gets
// script[A][N-1] (an empty final answer past the end), or what hook returns
// when it is set and answers ok. It records every input, by agent.
type treeModel struct {
	mu     sync.Mutex
	script map[string][]model.Response
	seen   map[string][]activities.CallModelInput
	hook   func(in activities.CallModelInput) (model.Response, bool)
	// fail, when set, fails the calls it returns an error for.
	fail func(in activities.CallModelInput) error
}

// late makes call Call of agent Agent take D on the workflow clock (the
// test environment skips the time), so that the agents of a tree act in a
// known order.
type late struct {
	Agent string
	Call  int
	D     time.Duration
}

// newTreeEnv is a test environment with AgentWorkflow registered (or, when
// given, wf in its place) under its public name, which spawn starts.
func newTreeEnv(wf ...any) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	var fn any = AgentWorkflow
	if len(wf) > 0 {
		fn = wf[0]
	}
	env.RegisterWorkflowWithOptions(fn, workflow.RegisterOptions{Name: api.WorkflowName})
	return env
}

// scriptTree registers the scripted model (and a RunTool that echoes) on env.
func scriptTree(env *testsuite.TestWorkflowEnvironment, script map[string][]model.Response, lates ...late) *treeModel {
	tm := &treeModel{script: script, seen: map[string][]activities.CallModelInput{}}
	answer := func(_ context.Context, in activities.CallModelInput) (model.Response, error) {
		tm.mu.Lock()
		tm.seen[in.AgentID] = append(tm.seen[in.AgentID], in)
		hook, fail := tm.hook, tm.fail
		tm.mu.Unlock()
		if fail != nil {
			if err := fail(in); err != nil {
				return model.Response{}, err
			}
		}
		if hook != nil {
			if r, ok := hook(in); ok {
				return r, nil
			}
		}
		rs := script[in.AgentID]
		if in.Call > len(rs) {
			return model.Response{}, nil
		}
		r := rs[in.Call-1]
		r.ToolCalls = append([]model.ToolCall(nil), r.ToolCalls...)
		for i := range r.ToolCalls {
			if r.ToolCalls[i].ID == "" {
				r.ToolCalls[i].ID = fmt.Sprintf("%s-%d-%d", in.AgentID, in.Call, i)
			}
		}
		return r, nil
	}
	env.RegisterActivityWithOptions(answer, activity.RegisterOptions{Name: api.ModelCallActivity})
	env.RegisterActivityWithOptions(func(_ context.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
		return activities.RunToolResult{Content: "ran " + in.Call.Name}, nil
	}, activity.RegisterOptions{Name: api.ToolActivity})
	registerHost(env)
	for _, l := range lates {
		env.OnActivity(api.ModelCallActivity, mock.Anything, mock.MatchedBy(func(in activities.CallModelInput) bool {
			return in.AgentID == l.Agent && in.Call == l.Call
		})).After(l.D).Return(answer)
	}
	if len(lates) > 0 {
		env.OnActivity(api.ModelCallActivity, mock.Anything, mock.Anything).Return(answer)
	}
	return tm
}

// inputs are the model inputs agentID's calls had, in call order.
func (tm *treeModel) inputs(agentID string) []activities.CallModelInput {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return append([]activities.CallModelInput(nil), tm.seen[agentID]...)
}

// rootInput is a root with the guards and continuation out of the way and
// plans started without approval, unless a test says otherwise.
func rootInput(prompt string) api.AgentInput {
	zero, off := 0, false
	in := api.AgentInput{Prompt: prompt, IdleTimeoutS: 7 * 24 * 3600}
	in.Todo = todo.Config{PlanApproval: todo.ApprovalAuto, FinalizationMaxCorrections: &zero, Continuation: &off}
	return in
}

// testTreeKey is the tree key of a root from keyedRoot.
const testTreeKey = "key-of-the-test-tree"

// keyedRoot starts env's root from rootInput(prompt) whose tree already has
// a key, as a continuation of a root that spawned before: a test that plays
// another member of the tree signals with testTreeKey (a first run mints
// its own, which the test cannot know).
func keyedRoot(env testEnv, prompt string) {
	in := rootInput("")
	c, err := json.Marshal(&Carry{Protocol: api.Protocol, Window: WindowCarry{Messages: []model.Message{{Role: model.RoleSystem, Content: "system"}}},
		Inbox: InboxCarry{Queue: []Inbound{{Text: prompt}}}, Tree: &TreeCarry{Key: testTreeKey}})
	if err != nil {
		panic(err) // a carry of plain values
	}
	in.Carry = c
	env.SetContinuedExecutionRunID("the-run-before")
	env.ExecuteWorkflow(api.WorkflowName, in)
}

// quiet is the todo argument of spawn_subagent for a child whose script
// needs no guard: no correction, no continuation.
const quiet = `{"finalization_max_corrections":0,"continuation":false}`

// spawn is a spawn_subagent call.
func spawnCall(id, task, todoJSON string) model.ToolCall {
	args := map[string]any{"agent_id": id, "task": task}
	if todoJSON != "" {
		args["todo"] = json.RawMessage(todoJSON)
	}
	b, _ := json.Marshal(args)
	return model.ToolCall{Name: todo.ToolSpawnSubagent, Arguments: b}
}

func say(text string) model.Response { return model.Response{Content: text} }

// reviewOfKid is the script of a root whose plan's step waits on its
// subagent kid's work (task): it plans, spawns kid, adds the dependent
// step, completes its own and answers "Waiting for kid.", then the
// answers of then. kid answers "done".
func reviewOfKid(task string, then ...model.Response) map[string][]model.Response {
	main := []model.Response{
		calls(call("createPlan", `{"title":"Review","steps":["delegate"]}`)),
		calls(call("startPlan", `{}`)),
		calls(spawnCall("kid", task, quiet)),
		calls(call("addDependentStep", `{"description":"review kid's work","depends_on":[{"agent_id":"kid","step_id":"step_1"}]}`)),
		calls(call("setStepStatus", `{"step_id":"step_1","status":"completed","result":"delegated"}`)),
		say("Waiting for kid."),
	}
	return map[string][]model.Response{"main": append(main, then...), "kid": {say("done")}}
}

// stateOf queries the state of any workflow of the tree (running or ended).
func stateOf(t *testing.T, env *testsuite.TestWorkflowEnvironment, workflowID string) api.State {
	t.Helper()
	v, err := env.QueryWorkflowByID(workflowID, api.StateQuery)
	if err != nil {
		t.Fatalf("state query of %s: %v", workflowID, err)
	}
	var s api.State
	if err := v.Get(&s); err != nil {
		t.Fatalf("decode state of %s: %v", workflowID, err)
	}
	return s
}

// messagesOf queries the transcript of any workflow of the tree.
func messagesOf(t *testing.T, env *testsuite.TestWorkflowEnvironment, workflowID string) []model.Message {
	t.Helper()
	v, err := env.QueryWorkflowByID(workflowID, api.MessagesQuery)
	if err != nil {
		t.Fatalf("messages query of %s: %v", workflowID, err)
	}
	var ms []model.Message
	if err := v.Get(&ms); err != nil {
		t.Fatalf("decode messages of %s: %v", workflowID, err)
	}
	return ms
}

// toolAnswer is the tool message that answered the call with id callID.
func toolAnswer(msgs []model.Message, callID string) (model.Message, bool) {
	for _, m := range msgs {
		if m.Role == model.RoleTool && m.ToolCallID == callID {
			return m, true
		}
	}
	return model.Message{}, false
}

// eventsOf filters a log: the events of agent (any agent when "") of type
// typ (any type when "").
func eventsOf(evs []todo.Event, agent, typ string) []todo.Event {
	var out []todo.Event
	for _, ev := range evs {
		if (agent == "" || ev.AgentID == agent) && (typ == "" || ev.Type == typ) {
			out = append(out, ev)
		}
	}
	return out
}

// step is the step of a plan by id (fails the test when absent).
func step(t *testing.T, p *todo.Plan, id string) todo.Step {
	t.Helper()
	if p == nil {
		t.Fatalf("no plan, looking for %s", id)
	}
	for _, s := range p.Steps {
		if s.StepID == id {
			return s
		}
	}
	t.Fatalf("plan %s has no %s: %+v", p.PlanID, id, p.Steps)
	return todo.Step{}
}

// completed requires the root run to have completed without error.
func completed(t *testing.T, env *testsuite.TestWorkflowEnvironment) {
	t.Helper()
	if !env.IsWorkflowCompleted() {
		t.Fatal("the root run did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("the root run failed: %v", err)
	}
}

func dump(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

func slicesContains(list []string, s string) bool { return slices.Contains(list, s) }

type testEnv = *testsuite.TestWorkflowEnvironment

// updateCallback is a TestUpdateCallback that reports a rejection to reject
// and ignores the rest.
type updateCallback struct {
	reject   func(error)
	complete func(any, error)
}

func (u *updateCallback) Accept() {}
func (u *updateCallback) Reject(err error) {
	if u.reject != nil {
		u.reject(err)
	}
}
func (u *updateCallback) Complete(success any, err error) {
	if u.complete != nil {
		u.complete(success, err)
	}
}

// withExecutionTimeout is AgentWorkflow under a stand-in for the server's
// execution timeout, which the test environment does not enforce (it
// enforces run timeouts only): a child is ended, as the server ends it, once
// the execution timeout its parent set has passed. limit receives the last
// child's execution timeout. Register it as WorkflowName in place of
// AgentWorkflow.
func withExecutionTimeout(limit *time.Duration) func(workflow.Context, api.AgentInput) (api.AgentResult, error) {
	return func(ctx workflow.Context, in api.AgentInput) (api.AgentResult, error) {
		info := workflow.GetInfo(ctx)
		if info.ParentWorkflowExecution == nil {
			return AgentWorkflow(ctx, in)
		}
		*limit = info.WorkflowExecutionTimeout
		var res api.AgentResult
		var err error
		done := false
		workflow.Go(ctx, func(ctx workflow.Context) {
			res, err = AgentWorkflow(ctx, in)
			done = true
		})
		ok, werr := workflow.AwaitWithTimeout(ctx, info.WorkflowExecutionTimeout, func() bool { return done })
		switch {
		case werr != nil:
			return api.AgentResult{}, werr
		case ok:
			return res, err
		}
		return api.AgentResult{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_START_TO_CLOSE, nil)
	}
}

// signalCounter watches the signals the agents of a tree send each other:
// it counts them and those carrying events, records the events sent to a
// workflow that had completed, and the signals sent to a workflow before
// the previous one to it was delivered (the sender's order).
type signalCounter struct {
	interceptor.WorkerInterceptorBase
	mu       sync.Mutex
	ended    map[string]bool
	inFlight map[string]int
	signals  int
	events   int
	toEnded  []string
	overlaps []string
}

// countSignals installs a signalCounter on env.
func countSignals(env *testsuite.TestWorkflowEnvironment) *signalCounter {
	sc := &signalCounter{ended: map[string]bool{}, inFlight: map[string]int{}}
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{sc}})
	env.SetOnChildWorkflowCompletedListener(func(info *workflow.Info, _ converter.EncodedValue, _ error) {
		sc.mu.Lock()
		defer sc.mu.Unlock()
		sc.ended[info.WorkflowExecution.ID] = true
	})
	return sc
}

// check fails the test for an event signalled to an ended agent, or a
// signal sent before the previous one to its workflow was delivered.
func (c *signalCounter) check(t *testing.T) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.signals == 0 || len(c.toEnded) != 0 || len(c.overlaps) != 0 {
		t.Errorf("%d signals; events to ended agents %v; sent before the previous one to the same workflow was delivered %v", c.signals, c.toEnded, c.overlaps)
	}
}

func (c *signalCounter) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &countingInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, c: c}
}

type countingInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	c *signalCounter
}

func (i *countingInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&countingOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: outbound}, c: i.c})
}

type countingOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	c *signalCounter
}

func (o *countingOutbound) SignalExternalWorkflow(ctx workflow.Context, workflowID, runID, name string, arg any) workflow.Future {
	c := o.c
	c.mu.Lock()
	c.signals++
	if c.inFlight[workflowID] > 0 {
		c.overlaps = append(c.overlaps, workflowID+": "+name)
	}
	c.inFlight[workflowID]++
	if e, ok := arg.(Events); ok && len(e.Events) > 0 {
		c.events += len(e.Events)
		if c.ended[workflowID] {
			c.toEnded = append(c.toEnded, fmt.Sprintf("%s: %d events of %s", workflowID, len(e.Events), e.Of))
		}
	}
	c.mu.Unlock()
	return &deliveredFuture{Future: o.Next.SignalExternalWorkflow(ctx, workflowID, runID, name, arg), done: func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.inFlight[workflowID]--
	}}
}

// deliveredFuture is a signal's future that says when its sender read it.
type deliveredFuture struct {
	workflow.Future
	done func()
	read bool
}

func (f *deliveredFuture) Get(ctx workflow.Context, v any) error {
	err := f.Future.Get(ctx, v)
	if !f.read {
		f.read = true
		f.done()
	}
	return err
}
