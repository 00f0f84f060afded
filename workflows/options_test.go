package workflows

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
)

// A worker that encrypts its payloads leaves TodoCurrent empty: search
// attributes are stored in the clear.
func TestEncryptedWorkerKeepsTodoTextOutOfSearchAttributes(t *testing.T) {
	for _, encrypted := range []bool{false, true} {
		var s testsuite.WorkflowTestSuite
		env := s.NewTestWorkflowEnvironment()
		opts := Options{Encrypted: encrypted}
		env.RegisterWorkflowWithOptions(func(ctx workflow.Context, in api.AgentInput) (api.AgentResult, error) {
			return agentWorkflow(ctx, in, opts)
		}, workflow.RegisterOptions{Name: api.WorkflowName})
		scripted(env, calls(call("write_todos", `{"todos":[{"content":"Rotate the secret key","status":"in_progress"}]}`)), model.Response{Content: "on it"})
		var current []string
		env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
			if v, ok := args.Get(0).(temporal.SearchAttributes).GetKeyword(api.TodoCurrentKey); ok {
				current = append(current, v)
			}
		}).Return(nil)
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, time.Hour)
		env.ExecuteWorkflow(api.WorkflowName, api.AgentInput{Prompt: "rotate", Todo: todoPolicy("")})
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

// The run's tools reach RunTool, which refuses the others, and an empty
// list (no worker tool at all) survives continue-as-new.
func TestRunToolGetsTheRunsTools(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	scripted(env, calls(call("read_file", `{"path":"a"}`)), model.Response{Content: "done"})
	var got [][]string
	env.RegisterActivityWithOptions(func(_ context.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
		got = append(got, in.WorkerTools)
		return activities.RunToolResult{Content: "ok"}, nil
	}, activity.RegisterOptions{Name: api.ToolActivity, DisableAlreadyRegisteredCheck: true})
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "read", IdleTimeoutS: 1, Tools: []string{"read_*"}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0]) != 1 || got[0][0] != "read_*" {
		t.Errorf("RunTool got tools %q, want [read_*]", got)
	}

	b, err := json.Marshal(api.AgentInput{Tools: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	var back api.AgentInput
	if err := json.Unmarshal(b, &back); err != nil || back.Tools == nil {
		t.Errorf("tools [] after a round trip = %#v (%s): the run would be offered every tool", back.Tools, b)
	}
}

// A subagent gets at most its parent's tools.
func TestSubagentToolsAreBoundedByTheParents(t *testing.T) {
	env := newTreeEnv()
	tm := scriptTree(env, map[string][]model.Response{
		"main": {calls(
			spawnCall("inherits", "go", quiet),
			model.ToolCall{Name: "spawn_subagent", Arguments: []byte(`{"agent_id":"asks_more","task":"go","tools":["write_file"]}`)},
			model.ToolCall{Name: "spawn_subagent", Arguments: []byte(`{"agent_id":"asks_less","task":"go","tools":["read_file"],"todo":` + quiet + `}`)},
		), say("spawned")},
		"inherits":  {say("done")},
		"asks_less": {say("done")},
	})
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, time.Hour)
	in := rootInput("delegate")
	in.Tools = []string{"read_*", "list_files"}
	env.ExecuteWorkflow(AgentWorkflow, in)
	completed(t, env)
	if got := tm.inputs("inherits"); len(got) == 0 || strings.Join(got[0].WorkerTools, ",") != "read_*,list_files" {
		t.Errorf("the child that asked for no tools is offered %v; want its parent's", got)
	}
	if got := tm.inputs("asks_less"); len(got) == 0 || strings.Join(got[0].WorkerTools, ",") != "read_file" {
		t.Errorf("the child that asked for read_file is offered %v", got)
	}
	msgs := messagesOf(t, env, treeRoot)
	if m, ok := toolAnswer(msgs, "main-1-1"); !ok || !m.IsError || !strings.Contains(m.Content, `"write_file" is not among the tools you may use`) {
		t.Errorf("spawn asking for more tools answered %+v", m)
	}
}
