package workflows

import (
	"sync"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
)

// A running subagent tells its parent its model with its counters, the
// worker's default model as its calls reported it when its input names
// none: its parent's entry for it shows the model (/agents) and prices its
// usage; and it is started with the summary memo, as a root is by its
// starter, which the Web UI keeps for its continued runs.
func TestSubagentReportsItsModelAndHasAMemo(t *testing.T) {
	const served = "gpt-4o-mini-2024-07-18"
	env := newTreeEnv()
	memos := &childMemos{}
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{memos.interceptor()}})
	tm := scriptTree(env, map[string][]model.Response{
		"main": {calls(spawnCall("kid", "read the auth code", quiet)), say("kid works")},
		"kid": {
			calls(call("createPlan", `{"title":"Kid","steps":["read","write"]}`)),
			calls(call("startPlan", `{}`)),
			calls(call("setStepStatus", `{"step_id":"step_1","status":"completed","result":"read it"}`)),
			calls(call("completePlan", `{"status":"completed"}`)),
			say("kid done"),
		},
	}, late{"kid", 4, time.Hour})
	tm.hook = func(in activities.CallModelInput) (model.Response, bool) {
		if in.AgentID != "kid" {
			return model.Response{}, false
		}
		rs := tm.script["kid"]
		r := rs[min(in.Call, len(rs))-1]
		r.ToolCalls = append([]model.ToolCall(nil), r.ToolCalls...)
		for i := range r.ToolCalls {
			r.ToolCalls[i].ID = "kid-" + string(rune('0'+in.Call))
		}
		r.Model = served
		return r, true
	}
	var during api.State
	env.RegisterDelayedCallback(func() { during = queryState(t, env) }, 30*time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 2*time.Hour)
	env.ExecuteWorkflow(api.WorkflowName, rootInput("go"))
	completed(t, env)

	kid := during.Subagents["kid"]
	if kid.Status != api.StatusRunning || kid.Live == nil || kid.Model != served || kid.Live.Model != served {
		t.Errorf("the parent's entry for the running kid = %s; want it running, its model %q", dump(kid), served)
	}
	if end := queryState(t, env).Subagents["kid"]; end.Model != served {
		t.Errorf("the ended kid's model = %q, want %q", end.Model, served)
	}
	memos.mu.Lock()
	defer memos.mu.Unlock()
	for id, m := range memos.got {
		if m != "subagent kid: read the auth code" {
			t.Errorf("child %s was started with the memo summary %q", id, m)
		}
	}
	if len(memos.got) != 1 {
		t.Errorf("%d children started with a summary memo, want 1", len(memos.got))
	}
}

// childMemos records the summary memo of each child workflow started.
type childMemos struct {
	mu  sync.Mutex
	got map[string]any
}

// interceptor is the worker interceptor that records them.
func (c *childMemos) interceptor() interceptor.WorkerInterceptor {
	return &withOutbound{wrap: func(next interceptor.WorkflowOutboundInterceptor) interceptor.WorkflowOutboundInterceptor {
		return &childMemosOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: next}, c: c}
	}}
}

type childMemosOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	c *childMemos
}

func (o *childMemosOutbound) ExecuteChildWorkflow(ctx workflow.Context, childWorkflowType string, args ...any) workflow.ChildWorkflowFuture {
	opts := workflow.GetChildWorkflowOptions(ctx)
	o.c.mu.Lock()
	if o.c.got == nil {
		o.c.got = map[string]any{}
	}
	o.c.got[opts.WorkflowID] = opts.Memo[api.MemoSummary]
	o.c.mu.Unlock()
	return o.Next.ExecuteChildWorkflow(ctx, childWorkflowType, args...)
}
