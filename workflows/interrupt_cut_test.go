package workflows

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
)

// cutCase is a turn whose model call the user interrupts mid-reply, and
// what the cancelled call answers the run.
type cutCase struct {
	name string
	// answer is what the cancelled call reports, after delay; nil: nothing
	// ever (its worker is gone).
	answer func() (any, error)
	delay  time.Duration
	// old runs the turn on a run an older build started (no
	// patchKeepInterrupted).
	old bool
	// want is the interrupted message's content; waited how long the
	// interrupt waited, at least.
	want   string
	waited time.Duration
	// usage is the session's completion tokens after the interrupt.
	usage int64
}

// The user interrupts a reply being written: what the worker reports the
// call had written is kept, in the interrupted message, and the next turn's
// model call carries it; a worker that never answers holds the turn
// cutWait at most; a run an older build started neither waits nor keeps
// it.
func TestInterruptKeepsTheCutReply(t *testing.T) {
	const partial = "I read the failing test: the token check runs after"
	reported := func() (any, error) {
		return nil, temporal.NewCanceledError(api.ReplyStream{AgentID: "main", Turn: 1, Call: 1, Text: partial})
	}
	kept := partial + api.InterruptedCut + cutNote
	tests := []cutCase{
		{name: "the worker reports the reply so far", answer: reported, delay: 3 * time.Second, want: kept, waited: 3 * time.Second},
		{name: "a long reply keeps its end", answer: func() (any, error) {
			return nil, temporal.NewCanceledError(api.ReplyStream{Call: 1, Text: "the end", Cut: 70000})
		}, delay: time.Second, want: "[… the first 70000 bytes of this reply are left out …]\nthe end" + api.InterruptedCut + cutNote, waited: time.Second},
		{name: "the answer came anyway", answer: func() (any, error) {
			return model.Response{Content: partial + " the session lookup.", ToolCalls: []model.ToolCall{call("run_command", `{"command":"make"}`)},
				Usage: model.Usage{PromptTokens: 10, CompletionTokens: 7}}, nil
		}, delay: time.Second, want: partial + " the session lookup." + api.InterruptedCut + cutNote, waited: time.Second, usage: 7},
		{name: "the worker is gone", want: interruptedReply, waited: cutWait},
		{name: "an older build's run", answer: reported, delay: 3 * time.Second, old: true, want: interruptedReply},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			if tt.old {
				env.OnGetVersion(patchKeepInterrupted, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
			}
			reads := &versionReads{}
			env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{cancelAnswer(tt.answer, tt.delay), reads.interceptor()}})
			var sentAt, doneAt time.Time
			var interrupted string
			var interruptErr error
			interrupt := func() {
				sentAt = env.Now()
				env.UpdateWorkflow(api.InterruptUpdate, "stop", &testsuite.TestUpdateCallback{
					OnReject: func(err error) { interruptErr = err },
					OnAccept: func() {},
					OnComplete: func(r any, err error) {
						interrupted, _ = r.(string)
						interruptErr, doneAt = err, env.Now()
					},
				})
			}
			cancelled := modelCallCancelled(env)
			var seen []activities.CallModelInput
			var tools int
			env.RegisterActivityWithOptions(func(ctx context.Context, in activities.CallModelInput) (model.Response, error) {
				seen = append(seen, in)
				if in.Call == 1 {
					interrupt()
					return untilCancelled(cancelled)
				}
				return model.Response{Content: "going on"}, nil
			}, activity.RegisterOptions{Name: api.ModelCallActivity})
			env.RegisterActivityWithOptions(func(context.Context, activities.RunToolInput) (activities.RunToolResult, error) {
				tools++
				return activities.RunToolResult{Content: "ran"}, nil
			}, activity.RegisterOptions{Name: api.ToolActivity})
			registerHost(env)
			msg := &sent{}
			env.RegisterDelayedCallback(func() { msg = sendUpdate(env, api.SendMessageUpdate, "m1", "fix the auth test") }, time.Minute)
			var between api.State
			env.RegisterDelayedCallback(func() {
				between = queryState(t, env)
				env.SignalWorkflow(api.UserMessageSignal, "go on")
			}, 10*time.Minute)
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 20*time.Minute)
			env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{IdleTimeoutS: 7200})
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			if interruptErr != nil || interrupted != interruptedReply || msg.reply != tt.want || msg.err != nil || msg.refused != nil {
				t.Fatalf("interrupt answered %q, %v; the turn replied %q (%v, %v), want %q", interrupted, interruptErr, msg.reply, msg.err, msg.refused, tt.want)
			}
			if waited := doneAt.Sub(sentAt); waited < tt.waited || waited > tt.waited+time.Second {
				t.Errorf("the interrupt waited %v, want %v", waited, tt.waited)
			}
			if between.Status != api.StatusWaitingUser || between.Usage.CompletionTokens != tt.usage || tools != 0 {
				t.Errorf("after the interrupt: status %s, usage %+v, %d tools run; want waiting, %d completion tokens, none run",
					between.Status, between.Usage, tools, tt.usage)
			}
			// The next turn's call carries the interrupted message: the
			// model reads what the user read.
			if len(seen) != 2 {
				t.Fatalf("%d model calls, want 2", len(seen))
			}
			var carried []string
			for _, m := range seen[1].New.Messages {
				if m.Name == api.NameInterrupted {
					carried = append(carried, m.Content)
				}
			}
			if len(carried) != 1 || carried[0] != tt.want {
				t.Errorf("the next call carries the interrupted messages %q, want %q", carried, tt.want)
			}
			if n := reads.of(patchKeepInterrupted); n != 1 {
				t.Errorf("the patch was read %d times, want once: where the interrupt reached the call", n)
			}
			if !strings.HasSuffix(tt.want, interruptedReply) && !strings.HasSuffix(tt.want, cutNote) {
				t.Errorf("the case's message %q ends with no note", tt.want)
			}
		})
	}
}

// A run that no interrupt reaches does not read patchKeepInterrupted: it
// records no marker for it (and no upsert of TemporalChangeVersion).
func TestKeepInterruptedIsReadOnInterruptOnly(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	reads := &versionReads{}
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{reads.interceptor()}})
	scripted(env, calls(call("read_file", `{"path":"f"}`)), model.Response{Content: "read it"})
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, time.Hour)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "read f", IdleTimeoutS: 7200})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if n, lean := reads.of(patchKeepInterrupted), reads.of(patchLeanTurn); n != 0 || lean != 1 {
		t.Errorf("patches read: %s %d times, %s %d; want 0 and 1", patchKeepInterrupted, n, patchLeanTurn, lean)
	}
}

// versionReads counts the workflow's reads of each patch.
type versionReads struct {
	mu sync.Mutex
	n  map[string]int
}

func (v *versionReads) of(id string) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.n[id]
}

func (v *versionReads) interceptor() interceptor.WorkerInterceptor {
	return &withOutbound{wrap: func(next interceptor.WorkflowOutboundInterceptor) interceptor.WorkflowOutboundInterceptor {
		return &versionReadsOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: next}, v: v}
	}}
}

type versionReadsOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	v *versionReads
}

func (o *versionReadsOutbound) GetVersion(ctx workflow.Context, changeID string, minSupported, maxSupported workflow.Version) workflow.Version {
	o.v.mu.Lock()
	if o.v.n == nil {
		o.v.n = map[string]int{}
	}
	o.v.n[changeID]++
	o.v.mu.Unlock()
	return o.Next.GetVersion(ctx, changeID, minSupported, maxSupported)
}

// withOutbound is a worker interceptor that wraps each workflow's calls
// out (activities, children, timers) with wrap.
type withOutbound struct {
	interceptor.WorkerInterceptorBase
	wrap func(interceptor.WorkflowOutboundInterceptor) interceptor.WorkflowOutboundInterceptor
}

func (w *withOutbound) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &outboundWrapper{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, wrap: w.wrap}
}

type outboundWrapper struct {
	interceptor.WorkflowInboundInterceptorBase
	wrap func(interceptor.WorkflowOutboundInterceptor) interceptor.WorkflowOutboundInterceptor
}

func (i *outboundWrapper) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(i.wrap(outbound))
}

// cancelAnswer stands in for the server's answer to a model call the run
// cancelled and waits for (WaitForCancellation), which the test
// environment does not give: it resolves the call at once, with no
// details. The run gets answer's result after delay instead, or never
// when answer is nil (the call's worker is gone).
func cancelAnswer(answer func() (any, error), delay time.Duration) interceptor.WorkerInterceptor {
	return &withOutbound{wrap: func(next interceptor.WorkflowOutboundInterceptor) interceptor.WorkflowOutboundInterceptor {
		return &cancelAnswerOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: next}, answer: answer, delay: delay}
	}}
}

type cancelAnswerOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	answer func() (any, error)
	delay  time.Duration
}

func (o *cancelAnswerOutbound) ExecuteActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	call := o.Next.ExecuteActivity(ctx, activityType, args...)
	if activityType != api.ModelCallActivity || !workflow.GetActivityOptions(ctx).WaitForCancellation {
		return call
	}
	f, set := workflow.NewFuture(ctx)
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	workflow.Go(dctx, func(ctx workflow.Context) {
		var resp model.Response
		err := call.Get(ctx, &resp)
		if !temporal.IsCanceledError(err) {
			set.Set(resp, err)
			return
		}
		if o.answer == nil {
			return
		}
		_ = workflow.Sleep(ctx, o.delay)
		set.Set(o.answer())
	})
	return f
}
