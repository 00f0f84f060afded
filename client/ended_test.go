package client_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	sdkclient "go.temporal.io/sdk/client"

	"github.com/todoflow/todoflow/client"
)

// Failure says why a session's run failed, in the run's own words; nothing
// for one that runs.
func TestFailure(t *testing.T) {
	e := startEnv(t)
	e.worker(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := client.New(e.tc, client.Options{})
	in := api.AgentInput{Model: "gpt-4o"}
	// Start refuses what the workflow would; a run started otherwise (the
	// temporal CLI) fails, and Failure says why.
	if _, err := c.Start(ctx, in, client.StartOptions{ID: "refused-e2e"}); err == nil || !strings.Contains(err.Error(), `session input: model "gpt-4o"`) {
		t.Errorf("Start of a bad input = %v, want it refused before a run starts", err)
	}
	if _, err := e.tc.DescribeWorkflowExecution(ctx, "refused-e2e", ""); err == nil {
		t.Error("the refused input started a run")
	}
	if _, err := e.tc.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: "failure-e2e", TaskQueue: api.TaskQueue}, api.WorkflowName, in); err != nil {
		t.Fatal(err)
	}
	bad, err := c.Attach(ctx, "failure-e2e")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.Wait(ctx); err == nil {
		t.Fatal("a run with a bad model reference completed")
	}
	why, err := bad.Failure(ctx)
	if err != nil || !strings.Contains(why, `model "gpt-4o"`) || strings.Contains(why, "workflowID") {
		t.Errorf("Failure = %q, %v; want the input's refusal in its own words", why, err)
	}
	good, err := c.Start(ctx, api.AgentInput{Model: e.script(t, "idle.json", `{"model": []}`), IdleTimeoutS: 600}, client.StartOptions{ID: "running-e2e"})
	if err != nil {
		t.Fatal(err)
	}
	if why, err := good.Failure(ctx); err != nil || why != "" {
		t.Errorf("Failure of a running session = %q, %v; want none", why, err)
	}
}
