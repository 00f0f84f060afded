package testsuite

import (
	"context"
	"testing"
	"time"

	"github.com/todoflow/todoflow/scenario"
	"github.com/todoflow/todoflow/workflows"
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
	sc, err := scenario.Load("testdata/driven/27_child_adopted.json")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := env.s.c
	run := env.firstTurn(ctx, t, sc.RunInput(), id)
	waitFor(t, time.Minute, "the subagent's end, in a later run", func() bool {
		desc, err := c.DescribeWorkflowExecution(ctx, id, "")
		if err != nil || desc.GetWorkflowExecutionInfo().GetExecution().GetRunId() == run.GetRunID() {
			return false
		}
		st, ok := queryState(ctx, c, id)
		return ok && st.Subagents["kid"].Status == workflows.StatusCompleted
	})
	if err := c.SignalWorkflow(ctx, id, "", workflows.EndSessionSignal, nil); err != nil {
		t.Fatal(err)
	}
	var res workflows.AgentResult
	if err := run.Get(ctx, &res); err != nil {
		t.Fatalf("run: %v", err)
	}
	// The kid's summary, which it sent with its end, as a parent whose
	// child future resolved would show it.
	kid := res.State.Subagents["kid"]
	if kid.Status != workflows.StatusCompleted || kid.Turns != 1 || kid.ModelCalls != 1 {
		t.Errorf("kid in the final state: %+v, want completed after its one model call", kid)
	}
	return []string{"kid"}
}
