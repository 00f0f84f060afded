package workflows

import (
	"fmt"
	"testing"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/testsuite"

	"github.com/todoflow/todoflow/model"
)

// benchRun is the model's side of the agent run that testsuite/bench
// measures: a write_todos, six write_file calls, a write_todos that
// completes the list, and the final answer.
func benchRun() []model.Response {
	todos := func(status string) model.ToolCall {
		return call("write_todos", fmt.Sprintf(`{"todos":[{"content":"Write the six files","status":%q}]}`, status))
	}
	out := []model.Response{calls(todos("in_progress"))}
	for i := 1; i <= 6; i++ {
		out = append(out, calls(call("write_file", fmt.Sprintf(`{"path":"f%d.txt","content":"file %d\n"}`, i, i))))
	}
	return append(out, calls(todos("completed")), model.Response{Content: "Done: six files written."})
}

// BenchmarkAgentWorkflowRun plays that run's workflow code in the SDK's test
// environment, with activities that cost nothing: what the workflow itself
// costs a worker per run (go test -bench AgentWorkflowRun -cpuprofile),
// without the server and the network of testsuite/bench. Most of it is the
// test environment's; the profile shows the workflow's own share.
func BenchmarkAgentWorkflowRun(b *testing.B) {
	script := benchRun()
	for b.Loop() {
		var s testsuite.WorkflowTestSuite
		env := s.NewTestWorkflowEnvironment()
		scripted(env, script...)
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 0)
		env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "Write the six files f1.txt to f6.txt.", Model: "script:bench"})
		var res api.AgentResult
		if err := env.GetWorkflowResult(&res); err != nil {
			b.Fatal(err)
		}
		if res.ModelCalls != len(script) {
			b.Fatalf("%d model calls, want %d", res.ModelCalls, len(script))
		}
	}
}
