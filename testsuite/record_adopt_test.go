package testsuite

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	tfclient "github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/scenario"
)

// recordChildAdopted: a root spawns a subagent whose work takes seconds and
// ends its turn; waiting for its user, with the subagent running, it
// continues as new when the server suggests it (the recording server does
// early), and its continuation adopts the subagent: the subagent's
// tree_end, signalled to the workflow id, reaches the new run, which keeps
// the subagent's result from it. Its script is a file of testdata/driven,
// not of the scenarios the player plays: the player would end the session
// at its first wait, before the subagent is done.
func recordChildAdopted(t *testing.T, env *recordEnv, id string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := env.s.c
	run := env.startDriven(ctx, t, "27_child_adopted", id)
	waitFor(t, time.Minute, "the subagent's end, in a later run", func() bool {
		desc, err := c.DescribeWorkflowExecution(ctx, id, "")
		if err != nil || desc.GetWorkflowExecutionInfo().GetExecution().GetRunId() == run.GetRunID() {
			return false
		}
		st, ok := queryState(ctx, c, id)
		return ok && st.Subagents["kid"].Status == api.StatusCompleted
	})
	if err := c.SignalWorkflow(ctx, id, "", api.EndSessionSignal, nil); err != nil {
		t.Fatal(err)
	}
	var res api.AgentResult
	if err := run.Get(ctx, &res); err != nil {
		t.Fatalf("run: %v", err)
	}
	// The kid's summary, which it sent with its end, as a parent whose
	// child future resolved would show it.
	kid := res.State.Subagents["kid"]
	if kid.Status != api.StatusCompleted || kid.Turns != 1 || kid.ModelCalls != 1 {
		t.Errorf("kid in the final state: %+v, want completed after its one model call", kid)
	}
	return []string{"kid"}
}

// startDriven starts testdata/driven/NAME.json's session as workflow id and
// returns once its first turn has ended.
func (env *recordEnv) startDriven(ctx context.Context, t *testing.T, name, id string) client.WorkflowRun {
	t.Helper()
	sc, err := scenario.Load("testdata/driven/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	return env.firstTurn(ctx, t, sc.RunInput(), id)
}

// recordCancelAdoptedChild: a root hands over while its subagent works, and
// its continuation, asked by the user, cancels the subagent it adopted: a
// child of an earlier run has no future here, so the cancel goes to its
// workflow id, and its end comes back as its tree_end.
func recordCancelAdoptedChild(t *testing.T, env *recordEnv, id string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := env.s.c
	run := env.startDriven(ctx, t, "34_cancel_adopted_child", id)
	var st api.State
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the root stood at %s, the kid at %s", st.Status, st.Subagents["kid"].Status)
			logHistory(t, historyOf(t, c, id))
		}
	})
	waitFor(t, time.Minute, "the root in a later run, the kid running", func() bool {
		desc, err := c.DescribeWorkflowExecution(ctx, id, "")
		if err != nil || desc.GetWorkflowExecutionInfo().GetExecution().GetRunId() == run.GetRunID() {
			return false
		}
		var ok bool
		st, ok = queryState(ctx, c, id)
		return ok && st.Status == api.StatusWaitingUser && st.Subagents["kid"].Status == api.StatusRunning
	})
	sess := tfclient.New(c, tfclient.Options{}).Session(id)
	reply, err := sess.Send(ctx, "Call the survey off.").Reply(ctx)
	if err != nil || reply != "Called off." {
		t.Fatalf("send_message: %q, %v", reply, err)
	}
	waitFor(t, time.Minute, "the kid's end", func() bool {
		st, ok := queryState(ctx, c, id)
		return ok && st.Subagents["kid"].Status != api.StatusRunning
	})
	waitFor(t, time.Minute, "the kid's workflow cancelled", func() bool { return kidEnded(ctx, t, env, id) })
	kidCancelled(ctx, t, env, id)
	if err := c.SignalWorkflow(ctx, id, "", api.EndSessionSignal, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Wait(ctx); err != nil {
		t.Fatalf("run: %v", err)
	}
	return []string{"kid"}
}

// kidEnded reports whether root's subagent kid's workflow has ended.
func kidEnded(ctx context.Context, t *testing.T, env *recordEnv, root string) bool {
	desc, err := env.s.c.DescribeWorkflowExecution(ctx, root+"/kid", "")
	if err != nil {
		t.Fatal(err)
	}
	return desc.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
}

// kidCancelled fails the test unless root's subagent kid ended cancelled.
func kidCancelled(ctx context.Context, t *testing.T, env *recordEnv, root string) {
	t.Helper()
	desc, err := env.s.c.DescribeWorkflowExecution(ctx, root+"/kid", "")
	if err != nil {
		t.Fatal(err)
	}
	if s := desc.GetWorkflowExecutionInfo().GetStatus(); s != enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED {
		t.Errorf("the kid ended %s; want it cancelled", s)
	}
}

// recordCancelRootWithChildren: a root cancelled (a cancel request to its
// workflow) while its subagent works ends cancelled, and cancels the
// subagent first.
func recordCancelRootWithChildren(t *testing.T, env *recordEnv, id string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := env.s.c
	run := env.startDriven(ctx, t, "35_cancel_root_with_children", id)
	waitFor(t, time.Minute, "the kid running", func() bool {
		st, ok := queryState(ctx, c, id)
		return ok && st.Subagents["kid"].Status == api.StatusRunning
	})
	t.Cleanup(func() {
		if t.Failed() {
			logHistory(t, historyOf(t, c, id))
		}
	})
	if err := c.CancelWorkflow(ctx, id, ""); err != nil {
		t.Fatal(err)
	}
	var canceled *temporal.CanceledError
	if err := run.Get(ctx, nil); !errors.As(err, &canceled) {
		t.Fatalf("run: %v; want it cancelled", err)
	}
	waitFor(t, time.Minute, "the kid's workflow cancelled", func() bool { return kidEnded(ctx, t, env, id) })
	kidCancelled(ctx, t, env, id)
	return []string{"kid"}
}

// A cancel request ends the session in the run that received it, with its
// subagent, also on a server that suggests a handover early: a cancel that
// came in the same workflow task as the suggestion once handed the session
// over, and the continuation, which never knew of the cancel, went on with
// the subagent it adopted (the run never ended). Which task the cancel
// meets is the server's timing; each run of this test plays one of them.
func TestCancelledRootEndsWithItsChild(t *testing.T) {
	env := newRecordEnv(t, newStubRouter(t), false)
	for i := range 3 {
		recordCancelRootWithChildren(t, env, fmt.Sprintf("cancel-root-%d", i))
	}
}
