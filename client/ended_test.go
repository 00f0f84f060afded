package client_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/workflows"
)

// Failure says why a session's run failed, in the run's own words; nothing
// for one that runs.
func TestFailure(t *testing.T) {
	e := startEnv(t)
	e.worker(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := client.New(e.tc, client.Options{})
	bad, err := c.Start(ctx, workflows.AgentInput{Model: "gpt-4o"}, client.StartOptions{ID: "failure-e2e"})
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
	good, err := c.Start(ctx, workflows.AgentInput{Model: e.script(t, "idle.json", `{"model": []}`), IdleTimeoutS: 600}, client.StartOptions{ID: "running-e2e"})
	if err != nil {
		t.Fatal(err)
	}
	if why, err := good.Failure(ctx); err != nil || why != "" {
		t.Errorf("Failure of a running session = %q, %v; want none", why, err)
	}
}
