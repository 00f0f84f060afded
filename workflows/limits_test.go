package workflows

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/activities/tools"
	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// A response with more tool calls than a run may have activities pending
// runs the first todo.MaxToolCallsPerResponse and answers the rest; with
// 2,500 calls the run used to be stuck for good.
func TestToolCallsPerResponseAreCapped(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	many := make([]model.ToolCall, 2500)
	for i := range many {
		many[i] = model.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "read_file", Arguments: []byte(`{"path":"a"}`)}
	}
	scripted(env, model.Response{ToolCalls: many}, model.Response{Content: "done"})
	ran := 0
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		if info.ActivityType.Name == api.ToolActivity || info.ActivityType.Name == api.ToolOnHostActivity {
			ran++
		}
	})
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "read everything", IdleTimeoutS: 1})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if ran != todo.MaxToolCallsPerResponse {
		t.Errorf("%d tool activities ran, want %d", ran, todo.MaxToolCallsPerResponse)
	}
	var answered, refused int
	var msgs []model.Message
	for page := queryMessages(t, env); len(page) > 0; page = queryMessages(t, env, len(msgs), 500) {
		msgs = append(msgs, page...)
	}
	for _, m := range msgs {
		if m.Role != model.RoleTool {
			continue
		}
		answered++
		if m.IsError && strings.Contains(m.Content, fmt.Sprintf("at most %d run per response", todo.MaxToolCallsPerResponse)) {
			refused++
		}
	}
	if answered != len(many) || refused != len(many)-todo.MaxToolCallsPerResponse {
		t.Errorf("%d calls answered, %d refused; want every call answered and %d refused", answered, refused, len(many)-todo.MaxToolCallsPerResponse)
	}
}

// An agent spawns at most todo.MaxSubagents subagents, and one at
// todo.MaxTreeDepth none; the model reads why.
func TestSpawnIsCapped(t *testing.T) {
	spawn := func(id string) model.ToolCall {
		return call("spawn_subagent", fmt.Sprintf(`{"agent_id": %q, "task": "t", "todo": %s}`, id, quiet))
	}
	t.Run("depth", func(t *testing.T) {
		env := newTreeEnv()
		tm := scriptTree(env, map[string][]model.Response{
			"main":  {calls(spawn("child")), {Content: "done"}},
			"child": {calls(spawn("grand")), {Content: "done"}},
			"grand": {calls(spawn("great")), {Content: "done"}},
		})
		env.ExecuteWorkflow(AgentWorkflow, rootInput("go"))
		if err := env.GetWorkflowError(); err != nil {
			t.Fatal(err)
		}
		grand := tm.inputs("grand")
		if len(grand) < 2 || len(tm.inputs("great")) != 0 {
			t.Fatalf("the grandchild made %d model calls and its own subagent %d; want 2 and none", len(grand), len(tm.inputs("great")))
		}
		if got := grand[1].New.Messages; len(got) == 0 || !strings.Contains(got[len(got)-1].Content, "cannot spawn") {
			t.Errorf("the grandchild read %+v, want the refusal", got)
		}
	})
	t.Run("count", func(t *testing.T) {
		env := newTreeEnv()
		var spawns []model.ToolCall
		var busy []late // the children are still at work when the last is spawned
		for i := range todo.MaxSubagents + 1 {
			id := fmt.Sprintf("a%d", i)
			spawns = append(spawns, spawn(id))
			busy = append(busy, late{id, 1, time.Hour})
		}
		scriptTree(env, map[string][]model.Response{"main": {calls(spawns...), {Content: "done"}}}, busy...)
		env.ExecuteWorkflow(AgentWorkflow, rootInput("go"))
		if err := env.GetWorkflowError(); err != nil {
			t.Fatal(err)
		}
		if n := len(queryState(t, env).Subagents); n != todo.MaxSubagents {
			t.Errorf("%d children started, want %d", n, todo.MaxSubagents)
		}
		var refused int
		for _, m := range queryMessages(t, env) {
			if m.Role == model.RoleTool && m.IsError && strings.Contains(m.Content, "the most one agent may have at once") {
				refused++
			}
		}
		if refused != 1 {
			t.Errorf("%d spawns refused, want 1", refused)
		}
	})
}

// A model that chooses its subagent's model marks the child's model calls,
// so that the worker checks the choice (activities.Activities.SubagentModels);
// a child that gets its parent's model is not marked.
func TestSubagentModelChosen(t *testing.T) {
	env := newTreeEnv()
	tm := scriptTree(env, map[string][]model.Response{"main": {calls(
		call("spawn_subagent", `{"agent_id": "own", "task": "t", "todo": `+quiet+`}`),
		call("spawn_subagent", `{"agent_id": "same", "task": "t", "model": "openai:m", "todo": `+quiet+`}`),
		call("spawn_subagent", `{"agent_id": "other", "task": "t", "model": "openai:expensive", "todo": `+quiet+`}`),
	), {Content: "done"}}})
	in := rootInput("go")
	in.Model = "openai:m"
	env.ExecuteWorkflow(AgentWorkflow, in)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	for agent, want := range map[string]bool{"main": false, "own": false, "same": false, "other": true} {
		ins := tm.inputs(agent)
		if len(ins) == 0 || ins[0].ModelChosen != want {
			t.Errorf("%s's model calls: %d, model_chosen %v; want %v", agent, len(ins), len(ins) > 0 && ins[0].ModelChosen, want)
		}
	}
}

// A run that names a workspace outside the worker's roots is refused at
// its start, naming the field, and its state query says it failed; one
// inside a root gets its absolute folder in every tool call.
func TestWorkspaceIsCheckedAtStart(t *testing.T) {
	root := t.TempDir()
	roots, err := tools.NewRoots(root)
	if err != nil {
		t.Fatal(err)
	}
	acts := &activities.Activities{Roots: roots}
	t.Run("outside", func(t *testing.T) {
		var s testsuite.WorkflowTestSuite
		env := s.NewTestWorkflowEnvironment()
		scripted(env, calls(call("read_file", `{"path": "etc/passwd"}`)))
		env.RegisterActivityWithOptions(acts.CheckWorkspace, activity.RegisterOptions{Name: activities.CheckWorkspaceName, DisableAlreadyRegisteredCheck: true})
		env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "go", Workspace: "/"})
		err := env.GetWorkflowError()
		if err == nil || !strings.Contains(err.Error(), "invalid AgentWorkflow input: workspace") || !strings.Contains(err.Error(), "not a folder inside") {
			t.Fatalf("workflow error = %v, want the workspace refused", err)
		}
		if st := queryState(t, env); st.Status != api.StatusFailed {
			t.Errorf("state status = %q, want failed", st.Status)
		}
	})
	t.Run("inside", func(t *testing.T) {
		var s testsuite.WorkflowTestSuite
		env := s.NewTestWorkflowEnvironment()
		scripted(env, calls(call("read_file", `{"path": "a"}`)), model.Response{Content: "done"})
		env.RegisterActivityWithOptions(acts.CheckWorkspace, activity.RegisterOptions{Name: activities.CheckWorkspaceName, DisableAlreadyRegisteredCheck: true})
		var got []string
		run := func(_ context.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
			got = append(got, in.Workspace)
			return activities.RunToolResult{Content: "ok"}, nil
		}
		for _, name := range []string{api.ToolActivity, api.ToolOnHostActivity} {
			env.RegisterActivityWithOptions(run, activity.RegisterOptions{Name: name, DisableAlreadyRegisteredCheck: true})
		}
		env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "go", Workspace: "proj", IdleTimeoutS: 1})
		if err := env.GetWorkflowError(); err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0] != root+"/proj" {
			t.Errorf("tool calls got workspace %q, want %q", got, root+"/proj")
		}
	})
}

// A session that spawns 500 subagents, one after another, keeps what its
// state, its result and its carry hold of them bounded: the most recent
// fullChildren in summary, the older ones up to maxChildren in a bounded
// summary, the rest counted. Each once added about 4.8 KB for good, and a
// few hundred passed the server's 2 MiB limit on a continue-as-new input.
func TestManySubagentsStayBounded(t *testing.T) {
	const n = 500
	env := newTreeEnv()
	script := map[string][]model.Response{}
	var main []model.Response
	todos := `{"todos":[{"content":"Read the ticket carefully","status":"completed"},{"content":"Write the fix for the failing case","status":"completed"},{"content":"Run the tests and report back","status":"completed"}]}`
	for i := range n {
		id := fmt.Sprintf("s%03d", i)
		main = append(main, calls(call("spawn_subagent", fmt.Sprintf(`{"agent_id": %q, "task": "fix ticket %d", "todo": %s}`, id, i, quiet))))
		script[id] = []model.Response{calls(call("write_todos", todos)), say("fixed ticket " + id + strings.Repeat(", with notes", 40))}
	}
	script["main"] = append(main, say("all spawned"))
	scriptTree(env, script)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 24*time.Hour)
	in := rootInput("fix them all")
	in.MaxTurns = n + 10
	env.ExecuteWorkflow(api.WorkflowName, in)
	completed(t, env)
	st := queryState(t, env)
	b, _ := json.Marshal(st)
	t.Logf("state of a session of %d subagents: %d bytes, %d kept, %d pruned", n, len(b), len(st.Subagents), st.SubagentsPruned)
	if len(b) > 256<<10 {
		t.Errorf("the state query answers %d bytes, want at most 256 KiB", len(b))
	}
	if len(st.Subagents) != maxChildren || st.SubagentsPruned != n-maxChildren {
		t.Errorf("%d children kept, %d pruned; want %d and %d", len(st.Subagents), st.SubagentsPruned, maxChildren, n-maxChildren)
	}
	last, old := st.Subagents[fmt.Sprintf("s%03d", n-1)], st.Subagents[fmt.Sprintf("s%03d", n-fullChildren-1)]
	if len(last.Todos) != 3 || old.Ended == nil || old.Ended.TodosCompleted != 3 || !strings.HasPrefix(old.Ended.Result, "fixed ticket") {
		t.Errorf("the newest child %s, an older one %s; want the list of the newest and the bounded summary of the older", dump(last), dump(old))
	}
	var res api.AgentResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if rb, _ := json.Marshal(res); len(rb) > 256<<10 {
		t.Errorf("the result is %d bytes, want at most 256 KiB", len(rb))
	}
}

// What whoever starts or talks to a run hands it is capped where it
// enters: refused by the start and the send_message update, cut visibly
// when it comes by signal, refused to the model as a subagent's task.
func TestUserTextIsCapped(t *testing.T) {
	long := strings.Repeat("x", todo.MaxMessageBytes+1)
	for _, tt := range []struct {
		in   api.AgentInput
		want string
	}{
		{api.AgentInput{Prompt: long}, fmt.Sprintf("prompt is %d bytes: at most %d", len(long), todo.MaxMessageBytes)},
		{api.AgentInput{Prompt: "hi", SystemPrompt: strings.Repeat("s", todo.MaxSystemPromptBytes+1)}, "system_prompt is"},
		{api.AgentInput{Prompt: long[1:], SystemPrompt: strings.Repeat("s", todo.MaxSystemPromptBytes)}, ""},
		{api.AgentInput{Prompt: "hi", Tools: slices.Repeat([]string{"mcp__server__" + strings.Repeat("t", 100)}, 1000)}, "the input's settings (all but prompt and system_prompt) take"},
	} {
		if err := tt.in.Validate(); (err == nil) != (tt.want == "") || err != nil && !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Validate(prompt of %d bytes, system prompt of %d) = %v, want %q", len(tt.in.Prompt), len(tt.in.SystemPrompt), err, tt.want)
		}
	}

	t.Run("send_message", func(t *testing.T) {
		half := strings.Repeat("q", todo.MaxMessageBytes)
		for _, tt := range []struct {
			queued []Inbound
			text   string
			want   string
		}{
			{nil, long, "at most 131072 are taken"},
			{nil, long[1:], ""},
			{[]Inbound{{Text: half}}, half, ""},
			{[]Inbound{{Text: half}, {Text: half}}, "one more", "2 messages (262144 bytes) already wait"},
		} {
			a := &agent{inbox: &inbox{queue: tt.queued}}
			if err := a.validateSendMessage(tt.text); (err == nil) != (tt.want == "") || err != nil && !strings.Contains(err.Error(), tt.want) {
				t.Errorf("send_message of %d bytes after %d queued = %v, want %q", len(tt.text), len(tt.queued), err, tt.want)
			}
		}
	})

	t.Run("approval feedback", func(t *testing.T) {
		a := &agent{}
		if err := a.validateApproval(api.ApprovalArgs{Approved: new(true), Feedback: long}); err == nil || !strings.Contains(err.Error(), "the feedback is 131073 bytes") {
			t.Errorf("approve_plan with long feedback: %v", err)
		}
		if err := a.validateToolApproval(api.ToolApprovalArgs{Approved: new(true), CallID: "c", Feedback: long}); err == nil || !strings.Contains(err.Error(), "the feedback is 131073 bytes") {
			t.Errorf("approve_tool with long feedback: %v", err)
		}
	})

	t.Run("user_message signal and task", func(t *testing.T) {
		var s testsuite.WorkflowTestSuite
		env := s.NewTestWorkflowEnvironment()
		scripted(env,
			calls(call("spawn_subagent", fmt.Sprintf(`{"agent_id": "helper", "task": %q}`, long))),
			model.Response{Content: "ready"},
			model.Response{Content: "read it"})
		env.RegisterDelayedCallback(func() {
			env.SignalWorkflow(api.UserMessageSignal, strings.Repeat("é", todo.MaxQueuedBytes)) // 512 KiB
		}, time.Minute)
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 2*time.Minute)
		env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "go", IdleTimeoutS: 600})
		if err := env.GetWorkflowError(); err != nil {
			t.Fatal(err)
		}
		var task, user *model.Message
		msgs := queryMessages(t, env)
		for i := range msgs {
			switch m := &msgs[i]; {
			case m.Role == model.RoleTool:
				task = m
			case m.Role == model.RoleUser && i > todo.Head:
				user = m
			}
		}
		if task == nil || !task.IsError || !strings.Contains(task.Content, "task is 131073 bytes: at most 131072") {
			t.Errorf("the spawn with a long task was answered %+v", task)
		}
		if user == nil || len(user.Content) > todo.MaxMessageBytes || !strings.Contains(user.Content, "[This message was 524288 bytes; only its first") {
			t.Errorf("the long user_message signal reached the model as %d bytes", len(user.Content))
		}
	})
}
