package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/model"
)

// A worker that encrypts its payloads leaves TodoCurrent empty: search
// attributes are stored in the clear.
func TestEncryptedWorkerKeepsTodoTextOutOfSearchAttributes(t *testing.T) {
	for _, encrypted := range []bool{false, true} {
		var s testsuite.WorkflowTestSuite
		env := s.NewTestWorkflowEnvironment()
		opts := Options{Encrypted: encrypted}
		env.RegisterWorkflowWithOptions(func(ctx workflow.Context, in AgentInput) (AgentResult, error) {
			return agentWorkflow(ctx, in, opts)
		}, workflow.RegisterOptions{Name: WorkflowName})
		scripted(env, calls(call("write_todos", `{"todos":[{"content":"Rotate the secret key","status":"in_progress"}]}`)), model.Response{Content: "on it"})
		var current []string
		env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
			if v, ok := args.Get(0).(temporal.SearchAttributes).GetKeyword(TodoCurrentKey); ok {
				current = append(current, v)
			}
		}).Return(nil)
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(EndSessionSignal, nil) }, time.Hour)
		env.ExecuteWorkflow(WorkflowName, AgentInput{Prompt: "rotate", Todo: todoPolicy("")})
		if err := env.GetWorkflowError(); err != nil {
			t.Fatal(err)
		}
		shown := false
		for _, v := range current {
			shown = shown || v == "Rotate the secret key"
		}
		if shown == encrypted || len(current) == 0 {
			t.Errorf("encrypted %v: TodoCurrent values %q", encrypted, current)
		}
	}
}
