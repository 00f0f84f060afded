package workflows

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
	"github.com/todoflow/todoflow/transcript"
)

// previewEnv is approvalEnv with a PreviewTool that records the calls it
// was asked of (with where they stand, and whether they had run by then)
// and answers with fail's error when set, else a diff naming the call.
func previewEnv(fail error, responses ...model.Response) (*testsuite.TestWorkflowEnvironment, func() []previewAsk) {
	env, ran := approvalEnv(responses...)
	return env, recordPreviews(env, ran, fail)
}

type previewAsk struct {
	id, tool string
	from     *transcript.CallRef
	args     string // the arguments when they travel with the call
	ran      bool
}

func recordPreviews(env *testsuite.TestWorkflowEnvironment, ran *[]string, fail error) func() []previewAsk {
	var (
		mu    sync.Mutex
		asked []previewAsk
	)
	env.RegisterActivityWithOptions(func(_ context.Context, in activities.RunToolInput) (api.CallDiff, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, previewAsk{id: in.Call.ID, tool: in.Call.Name, from: in.From, args: string(in.Call.Arguments), ran: slices.Contains(*ran, in.Call.ID)})
		if fail != nil {
			return api.CallDiff{}, fail
		}
		return api.CallDiff{Hunks: "@@ -1 +1 @@\n-old\n+new of " + in.Call.ID, Added: 1, Removed: 1}, nil
	}, activity.RegisterOptions{Name: activities.PreviewToolName})
	return func() []previewAsk {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(asked)
	}
}

// approveC1a runs a session under policy whose call c1a waits: its state
// while c1a waits, which is then approved, and the session ended.
func approveC1a(t *testing.T, env *testsuite.TestWorkflowEnvironment, policy todo.ToolApproval) api.State {
	t.Helper()
	var st api.State
	env.RegisterDelayedCallback(func() {
		st = queryState(t, env)
		approveTool(t, env, api.ToolApprovalArgs{Approved: yes(), CallID: "c1a"}, nil)
	}, time.Hour)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 2*time.Hour)
	env.ExecuteWorkflow(AgentWorkflow, approvalInput(policy))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	return st
}

func previewIDs(asked []previewAsk) []string {
	var ids []string
	for _, a := range asked {
		ids = append(ids, a.id)
	}
	return ids
}

// A write_file call that waits for approval shows the diff it would make,
// asked of the worker before the wait, and before the call runs; a call of
// another tool waits without one, and a write the user approved for the
// session is not previewed. The diff is in the wait, never in the model's
// messages.
func TestPreviewBeforeTheWait(t *testing.T) {
	env, asked := previewEnv(nil,
		calls(call("write_file", `{"path":"a","content":"new"}`), call("list_files", `{}`), call("write_file", `{"path":"b","content":"y"}`)),
		calls(call("write_file", `{"path":"c","content":"z"}`)),
		calls(call("write_file", `{"path":"d","content":"w"}`)),
		say("done"))
	var first, second, third api.State
	var askedFirst []previewAsk
	env.RegisterDelayedCallback(func() {
		first, askedFirst = queryState(t, env), asked()
		approveTool(t, env, api.ToolApprovalArgs{Approved: yes(), CallID: "c1a"}, nil)
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		second = queryState(t, env)
		approveTool(t, env, api.ToolApprovalArgs{Approved: yes(), CallID: "c1b"}, nil)
	}, 2*time.Hour)
	env.RegisterDelayedCallback(func() {
		third = queryState(t, env)
		approveTool(t, env, api.ToolApprovalArgs{Approved: no(), Feedback: "not b", CallID: "c1c"}, nil)
	}, 3*time.Hour)
	env.RegisterDelayedCallback(func() {
		approveTool(t, env, api.ToolApprovalArgs{Approved: yes(), Remember: true, CallID: "c2a"}, nil)
	}, 4*time.Hour)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 5*time.Hour)
	env.ExecuteWorkflow(AgentWorkflow, approvalInput(todo.ToolApproval{"write_file": todo.ApprovalRequired, "list_files": todo.ApprovalRequired}))
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}

	if d := first.PendingApproval.Diff; d == nil || !strings.Contains(d.Hunks, "+new of c1a") || d.Added != 1 || d.Removed != 1 {
		t.Errorf("the first write's wait = %s", dump(first.PendingApproval))
	}
	if len(askedFirst) != 1 || askedFirst[0].id != "c1a" || askedFirst[0].ran {
		t.Errorf("while c1a waits, the previews asked = %+v; want c1a's, before it ran", askedFirst)
	}
	if second.PendingApproval == nil || second.PendingApproval.Tool != "list_files" || second.PendingApproval.Diff != nil {
		t.Errorf("list_files' wait = %s; want no diff", dump(second.PendingApproval))
	}
	if d := third.PendingApproval.Diff; third.PendingApproval.CallID != "c1c" || d == nil || !strings.Contains(d.Hunks, "+new of c1c") {
		t.Errorf("the second write's wait = %s", dump(third.PendingApproval))
	}
	all := asked()
	if got := previewIDs(all); !slices.Equal(got, []string{"c1a", "c1c", "c2a"}) {
		t.Errorf("previews asked of %v; want c1a, c1c, c2a (c3a's tool was approved for the session)", got)
	}
	msgs := queryMessages(t, env)
	for _, a := range all {
		c, ok := callIn(msgs, a.id)
		byRef := a.from != nil && a.from.Message < len(msgs) && a.from.Index < len(msgs[a.from.Message].ToolCalls) &&
			msgs[a.from.Message].ToolCalls[a.from.Index].ID == a.id
		if a.ran || a.tool != "write_file" || !ok || !byRef && a.args != string(c.Arguments) {
			t.Errorf("preview of %s: %+v (from %+v); want the call, with its arguments or by its place in the transcript, before it ran", a.id, a, a.from)
		}
	}
	for _, m := range msgs {
		if strings.Contains(m.Content, "new of") {
			t.Errorf("a diff reached the model: %+v", m)
		}
	}
	if m, ok := toolAnswer(msgs, "c1c"); !ok || !strings.Contains(m.Content, "not b") {
		t.Errorf("c1c answered %+v, want the refusal", m)
	}
}

// A run an older build started (patch preview-write not taken) waits as
// it did: no preview, no diff.
func TestPreviewNotInOlderRuns(t *testing.T) {
	env, asked := previewEnv(nil, calls(call("write_file", `{"path":"a","content":"x"}`)), say("done"))
	env.OnGetVersion(patchPreviewWrite, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	st := approveC1a(t, env, todo.ToolApproval{"write_file": todo.ApprovalRequired})
	if st.PendingApproval == nil || st.PendingApproval.CallID != "c1a" || st.PendingApproval.Diff != nil {
		t.Errorf("the wait = %s; want c1a without a diff", dump(st.PendingApproval))
	}
	if got := asked(); len(got) != 0 {
		t.Errorf("previews asked of %v; want none", previewIDs(got))
	}
}

// A preview that fails never holds the approval back: the call waits,
// saying why there is no diff, and runs once approved.
func TestPreviewFailureStillWaits(t *testing.T) {
	env, asked := previewEnv(errors.New("the disk is on fire"), calls(call("write_file", `{"path":"a","content":"x"}`)), say("done"))
	st := approveC1a(t, env, todo.ToolApproval{"write_file": todo.ApprovalRequired})
	if st.Status != api.StatusAwaitingApproval || st.PendingApproval == nil || st.PendingApproval.Diff == nil ||
		st.PendingApproval.Diff.Hunks != "" || !strings.Contains(st.PendingApproval.Diff.Unavailable, "the disk is on fire") {
		t.Errorf("the wait after a failed preview = %s", dump(st))
	}
	if got := asked(); len(got) != 2 {
		t.Errorf("the preview was tried %d times, want 2 (its retries are bounded)", len(got))
	}
	if m, ok := toolAnswer(queryMessages(t, env), "c1a"); !ok || m.Content != "ran write_file" {
		t.Errorf("c1a answered %+v; want it run", m)
	}
}

// A write the worker held (policy "destructive": only the worker knows
// the tool may overwrite) is previewed once held, before its wait.
func TestPreviewOfAHeldWrite(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	scripted(env, calls(call("write_file", `{"path":"a","content":"x"}`)), say("done"))
	var (
		mu  sync.Mutex
		ran []string
	)
	env.RegisterActivityWithOptions(func(_ context.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
		mu.Lock()
		defer mu.Unlock()
		if in.HoldDestructive {
			return activities.RunToolResult{Held: true, Content: "held"}, nil
		}
		ran = append(ran, in.Call.ID)
		return activities.RunToolResult{Content: "ran " + in.Call.Name}, nil
	}, activity.RegisterOptions{Name: api.ToolActivity})
	asked := recordPreviews(env, &ran, nil)
	st := approveC1a(t, env, todo.ToolApproval{"*": todo.ApprovalDestructive})
	if d := st.PendingApproval.Diff; d == nil || !strings.Contains(d.Hunks, "+new of c1a") {
		t.Errorf("the held write's wait = %s", dump(st.PendingApproval))
	}
	if got := asked(); len(got) != 1 || got[0].ran || got[0].args != `{"path":"a","content":"x"}` {
		t.Errorf("previews asked: %+v; want c1a's, with its arguments, before it ran", got)
	}
	if !slices.Equal(ran, []string{"c1a"}) {
		t.Errorf("ran %v, want c1a once approved", ran)
	}
}

// callIn is call id of msgs' model answers.
func callIn(msgs []model.Message, id string) (model.ToolCall, bool) {
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			if c.ID == id {
				return c, true
			}
		}
	}
	return model.ToolCall{}, false
}
