package workflows

import (
	"time"

	"github.com/todoflow/todoflow/api"

	"context"
	"errors"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/todo"
)

func todoPolicy(p string) todo.Config { return todo.Config{InProgressPolicy: todo.Policy(p)} }

func asContinueAsNew(err error, target **workflow.ContinueAsNewError) bool {
	return errors.As(err, target)
}

// continuedWith is the input a run that continued as new handed to its
// continuation, failing the test when the run did not continue as new.
func continuedWith(t *testing.T, env *testsuite.TestWorkflowEnvironment) handover {
	t.Helper()
	var can *workflow.ContinueAsNewError
	if !asContinueAsNew(env.GetWorkflowError(), &can) {
		t.Fatalf("want continue-as-new, got %v", env.GetWorkflowError())
	}
	var in api.AgentInput
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &in); err != nil {
		t.Fatal(err)
	}
	next, err := readHandover(in)
	if err != nil {
		t.Fatal(err)
	}
	return next
}

// asInput is h as the continuation receives it.
func asInput(t testing.TB, h handover) api.AgentInput {
	t.Helper()
	return withCarry(t, h.AgentInput, h.Carry)
}

// withCarry is in with c as its carry, as a continuation receives it.
func withCarry(t testing.TB, in api.AgentInput, c *Carry) api.AgentInput {
	t.Helper()
	out, err := handover{AgentInput: in, Carry: c}.input()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// suggestAfterTurn has the test server suggest continuing as new a second
// into the run, once its first turn has ended (a turn's activities take no
// time here): the run hands over between turns, not in the middle of its
// first one.
func suggestAfterTurn(env *testsuite.TestWorkflowEnvironment) {
	env.RegisterDelayedCallback(func() { env.SetContinueAsNewSuggested(true) }, time.Second)
}

// testHost is the host queue that the tests' WorkspaceHost answers.
const testHost = "todoflow-host-test"

// registerHost registers a WorkspaceHost that answers testHost, as every
// worker does beside RunTool, and a CheckWorkspace that takes any folder.
func registerHost(env *testsuite.TestWorkflowEnvironment) {
	env.RegisterActivityWithOptions(func(context.Context) (activities.HostInfo, error) {
		return activities.HostInfo{Queue: testHost}, nil
	}, activity.RegisterOptions{Name: activities.WorkspaceHostName, DisableAlreadyRegisteredCheck: true})
	// Every named workspace is inside the tests' roots.
	env.RegisterActivityWithOptions(func(_ context.Context, ws string) (string, error) {
		return ws, nil
	}, activity.RegisterOptions{Name: activities.CheckWorkspaceName, DisableAlreadyRegisteredCheck: true})
}
