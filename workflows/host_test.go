package workflows

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
)

// toolLog records, for the host tests, how often a run asked for its
// workspace's host and on which task queue each tool call ran.
type toolLog struct {
	mu    sync.Mutex
	asked int
	runs  []toolRun
}

// toolRun is a tool call that ran: queue is the host's queue of a call
// taken from it (RunTool), direct marks one taken as RunToolOnHost from the
// workflow's own queue by the host, queue then naming that host.
type toolRun struct {
	agent, tool, queue string
	direct             bool
}

func (l *toolLog) snapshot() (int, []toolRun) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.asked, append([]toolRun(nil), l.runs...)
}

// recordTools replaces WorkspaceHost (answering host; failing, as when no
// worker answers, when host is ""; answering that there is no host queue
// when host is noHostQueue), RunTool (failing call n, 0-based, with fail(n)
// when that is not nil) and RunToolOnHost (run as host's worker would: what
// RunTool does for a call sent to host, refused for any other) on env.
func recordTools(env *testsuite.TestWorkflowEnvironment, host string, fail func(n int) error) *toolLog {
	l := &toolLog{}
	// answer is the end of call n, of tool.
	answer := func(n int, tool string) (activities.RunToolResult, error) {
		if fail != nil {
			if err := fail(n); err != nil {
				return activities.RunToolResult{}, err
			}
		}
		return activities.RunToolResult{Content: "ran " + tool}, nil
	}
	env.RegisterActivityWithOptions(func(context.Context) (activities.HostInfo, error) {
		l.mu.Lock()
		l.asked++
		l.mu.Unlock()
		switch host {
		case "":
			return activities.HostInfo{}, temporal.NewNonRetryableApplicationError("no host answered", "TestNoHost", nil)
		case noHostQueue:
			return activities.HostInfo{}, nil
		}
		return activities.HostInfo{Queue: host}, nil
	}, activity.RegisterOptions{Name: activities.WorkspaceHostName, DisableAlreadyRegisteredCheck: true})
	env.RegisterActivityWithOptions(func(ctx context.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
		l.mu.Lock()
		n := len(l.runs)
		l.runs = append(l.runs, toolRun{agent: in.AgentID, tool: in.Call.Name, queue: activity.GetInfo(ctx).TaskQueue})
		l.mu.Unlock()
		return answer(n, in.Call.Name)
	}, activity.RegisterOptions{Name: api.ToolActivity, DisableAlreadyRegisteredCheck: true})
	env.RegisterActivityWithOptions(func(ctx context.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
		if q := activity.GetInfo(ctx).TaskQueue; q != testQueue {
			return activities.RunToolResult{}, fmt.Errorf("RunToolOnHost scheduled on %q, want the workflow's queue", q)
		}
		l.mu.Lock()
		n := len(l.runs)
		// A call that would find the host gone finds another worker
		// running the workflow, which refuses it.
		gone := fail != nil && notTaken(fail(n))
		if in.Host != host || gone {
			l.mu.Unlock()
			return activities.RunToolResult{}, temporal.NewNonRetryableApplicationError("not the host", activities.ErrTypeNotHost, nil)
		}
		l.runs = append(l.runs, toolRun{agent: in.AgentID, tool: in.Call.Name, queue: in.Host, direct: true})
		l.mu.Unlock()
		return answer(n, in.Call.Name)
	}, activity.RegisterOptions{Name: api.ToolOnHostActivity, DisableAlreadyRegisteredCheck: true})
	return l
}

// noHostQueue makes recordTools answer as a worker that polls no host
// queue of its own.
const noHostQueue = "(none)"

// testQueue is the task queue of a run in the test environment.
const testQueue = "default-test-taskqueue"

// hostGoneErr is what a tool call scheduled on a queue that no worker
// polls ends with.
func hostGoneErr() error {
	return temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil)
}

// A session learns its host once, at its first tool activity (not before:
// a todo tool needs none), and runs every tool call of every turn there.
func TestToolsRunOnTheWorkspaceHost(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	scripted(env,
		calls(call("write_todos", `{"todos":[{"content":"Write","status":"in_progress"}]}`)),
		calls(call("write_file", `{"path":"a.txt","content":"x"}`)),
		calls(call("read_file", `{"path":"a.txt"}`), call("list_files", `{}`)),
		model.Response{Content: "written"},
		// The second message.
		calls(call("read_file", `{"path":"a.txt"}`)),
		model.Response{Content: "still there"},
	)
	log := recordTools(env, "todoflow-host-a", nil)
	var before api.State
	var askedBefore int
	env.RegisterDelayedCallback(func() {
		before = queryState(t, env)
		askedBefore, _ = log.snapshot()
		env.SignalWorkflow(api.UserMessageSignal, "read it again")
	}, time.Minute)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 2*time.Minute)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "write a.txt", IdleTimeoutS: 3600})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	asked, runs := log.snapshot()
	if asked != 1 || askedBefore != 1 {
		t.Errorf("WorkspaceHost was asked %d times (%d in the first turn), want once", asked, askedBefore)
	}
	if len(runs) != 4 {
		t.Fatalf("tool calls = %+v, want 4", runs)
	}
	for _, r := range runs {
		if r.queue != "todoflow-host-a" {
			t.Errorf("%s ran on queue %q, want the host's", r.tool, r.queue)
		}
	}
	if ws := before.Workspace; ws == nil || ws.HostQueue != "todoflow-host-a" || ws.Shared || ws.UnansweredSince != nil {
		t.Errorf("state.workspace = %s", dump(ws))
	}

	// A run that calls only the workflow's own tools asks for no host.
	env2 := s.NewTestWorkflowEnvironment()
	scripted(env2, calls(call("write_todos", `{"todos":[{"content":"Think","status":"completed"}]}`)), model.Response{Content: "done"})
	log2 := recordTools(env2, "todoflow-host-a", nil)
	env2.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "think", IdleTimeoutS: 1})
	if err := env2.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if asked, _ := log2.snapshot(); asked != 0 || queryState(t, env2).Workspace != nil {
		t.Errorf("a run without tool activities asked for a host %d times, state.workspace %s", asked, dump(queryState(t, env2).Workspace))
	}
}

// A run sends its tool calls for the host to its own task queue
// (RunToolOnHost, which eager dispatch hands to the worker that ran the
// workflow task, the host as a rule). A call that another worker refuses
// goes to the host's queue, and so do the run's later calls; the calls of
// the same answer that the host took are not sent again.
func TestToolCallsGoDirectToTheHost(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	scripted(env,
		calls(call("write_file", `{"path":"a.txt","content":"x"}`)),
		calls(call("read_file", `{"path":"a.txt"}`), call("list_files", `{}`)),
		calls(call("read_file", `{"path":"a.txt"}`)),
		model.Response{Content: "done"},
	)
	log := recordTools(env, "todoflow-host-a", nil)
	var refused []string
	env.RegisterActivityWithOptions(func(ctx context.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
		if q := activity.GetInfo(ctx).TaskQueue; q != testQueue || in.Host != "todoflow-host-a" {
			t.Errorf("RunToolOnHost for %q on queue %q, want the host's call on the workflow's queue", in.Host, q)
		}
		log.mu.Lock()
		defer log.mu.Unlock()
		if in.Call.Name == "read_file" { // taken by a worker that is not the host
			refused = append(refused, in.Call.Name)
			return activities.RunToolResult{}, temporal.NewNonRetryableApplicationError("not the host", activities.ErrTypeNotHost, nil)
		}
		log.runs = append(log.runs, toolRun{agent: in.AgentID, tool: in.Call.Name, queue: in.Host, direct: true})
		return activities.RunToolResult{Content: "ran " + in.Call.Name}, nil
	}, activity.RegisterOptions{Name: api.ToolOnHostActivity, DisableAlreadyRegisteredCheck: true})
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "write and read", IdleTimeoutS: 1})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	_, runs := log.snapshot()
	want := map[toolRun]int{
		{agent: "main", tool: "write_file", queue: "todoflow-host-a", direct: true}: 1,
		{agent: "main", tool: "list_files", queue: "todoflow-host-a", direct: true}: 1,
		// Refused once, then on the host's queue; the next answer's
		// read goes there at once.
		{agent: "main", tool: "read_file", queue: "todoflow-host-a"}: 2,
	}
	got := map[toolRun]int{}
	for _, r := range runs {
		got[r]++
	}
	if len(refused) != 1 || !maps.Equal(got, want) {
		t.Errorf("refused %v; ran %+v; want one refusal and %+v", refused, runs, want)
	}
	for _, m := range queryMessages(t, env) {
		if m.Role == model.RoleTool && (m.IsError || !strings.HasPrefix(m.Content, "ran ")) {
			t.Errorf("tool message %+v", m)
		}
	}
}

// The host is carried through continue-as-new: the next run sends its
// tools to the same host and does not ask again.
func TestWorkspaceHostCarriedThroughContinueAsNew(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	scripted(env, calls(call("write_file", `{"path":"a.txt","content":"x"}`)), model.Response{Content: "written"})
	recordTools(env, "todoflow-host-a", nil)
	env.SetContinueAsNewSuggested(true)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "write", IdleTimeoutS: 3600})
	next := continuedWith(t, env)
	if next.WorkspaceHost != "todoflow-host-a" {
		t.Fatalf("the continuation's workspace_host = %q, want the host of the run", next.WorkspaceHost)
	}

	// Another worker would answer todoflow-host-b: the continuation must
	// not ask.
	env2 := s.NewTestWorkflowEnvironment()
	scripted(env2, model.Response{}, model.Response{}, calls(call("read_file", `{"path":"a.txt"}`)), model.Response{Content: "read"})
	log := recordTools(env2, "todoflow-host-b", nil)
	var st api.State
	env2.RegisterDelayedCallback(func() { st = queryState(t, env2) }, time.Second)
	env2.RegisterDelayedCallback(func() { env2.SignalWorkflow(api.UserMessageSignal, "read it") }, 2*time.Second)
	env2.RegisterDelayedCallback(func() { env2.SignalWorkflow(api.EndSessionSignal, nil) }, time.Minute)
	env2.SetContinuedExecutionRunID("the-run-before")
	env2.ExecuteWorkflow(AgentWorkflow, asInput(t, next))
	if err := env2.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	asked, runs := log.snapshot()
	if asked != 0 || len(runs) != 1 || runs[0].queue != "todoflow-host-a" {
		t.Errorf("continuation: asked %d times, tool calls %+v; want none, read_file on todoflow-host-a", asked, runs)
	}
	if st.Workspace == nil || st.Workspace.HostQueue != "todoflow-host-a" {
		t.Errorf("continuation's state.workspace before any tool = %s", dump(st.Workspace))
	}
}

// A subagent shares its parent's workspace, so its tools run on its
// parent's host; the parent learns it before it starts the child, and the
// child never asks.
func TestSubagentUsesItsParentsHost(t *testing.T) {
	env := newTreeEnv()
	scriptTree(env, map[string][]model.Response{
		"main": {
			calls(spawnCall("kid", "read a.txt", quiet)),
			say("kid is on it"),
			calls(call("read_file", `{"path":"a.txt"}`)),
			say("read"),
		},
		"kid": {
			calls(call("write_file", `{"path":"a.txt","content":"x"}`)),
			say("kid done"),
		},
	})
	log := recordTools(env, "todoflow-host-a", nil)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.UserMessageSignal, "read what kid wrote") }, time.Hour)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 2*time.Hour)
	env.ExecuteWorkflow(api.WorkflowName, rootInput("go"))
	completed(t, env)

	asked, runs := log.snapshot()
	if asked != 1 {
		t.Errorf("WorkspaceHost was asked %d times, want once (by the parent)", asked)
	}
	agents := map[string]bool{}
	for _, r := range runs {
		agents[r.agent] = true
		if r.queue != "todoflow-host-a" {
			t.Errorf("%s's %s ran on %q, want the parent's host", r.agent, r.tool, r.queue)
		}
	}
	if !agents["main"] || !agents["kid"] {
		t.Errorf("tool calls = %+v, want main's and kid's", runs)
	}
	if ws := stateOf(t, env, childWF("kid")).Workspace; ws == nil || ws.HostQueue != "todoflow-host-a" {
		t.Errorf("kid's state.workspace = %s", dump(ws))
	}
}

// When the host does not take a tool call within host_wait_s, the model
// reads an error that says so, the session goes on, and the tools work
// again once the host is back.
func TestWorkspaceHostGone(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	scripted(env,
		calls(call("write_file", `{"path":"a.txt","content":"x"}`)),
		calls(call("read_file", `{"path":"a.txt"}`)),
		model.Response{Content: "the host is gone"},
		// The next message, the host back.
		calls(call("read_file", `{"path":"a.txt"}`)),
		model.Response{Content: "read"},
	)
	log := recordTools(env, "todoflow-host-a", func(n int) error {
		if n == 1 {
			return hostGoneErr()
		}
		return nil
	})
	var between api.State
	env.RegisterDelayedCallback(func() {
		between = queryState(t, env)
		env.SignalWorkflow(api.UserMessageSignal, "try again")
	}, time.Hour)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, 2*time.Hour)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "write and read", IdleTimeoutS: 3 * 3600, HostWaitS: 5})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("the session failed: %v", err)
	}
	var tools []model.Message
	for _, m := range queryMessages(t, env) {
		if m.Role == model.RoleTool {
			tools = append(tools, m)
		}
	}
	if len(tools) != 3 {
		t.Fatalf("tool messages = %s", dump(tools))
	}
	gone := tools[1]
	want := "Tool read_file was not run: the workspace's host todoflow-host-a is not answering (no worker took the call within 5s)."
	if !gone.IsError || !strings.HasPrefix(gone.Content, want) || !strings.Contains(gone.Content, "not sent to another worker") {
		t.Errorf("the call the host did not take was answered %q (error %v), want %q…", gone.Content, gone.IsError, want)
	}
	if tools[2].IsError || tools[2].Content != "ran read_file" {
		t.Errorf("after the host came back: %+v", tools[2])
	}
	if between.Status != api.StatusWaitingUser || between.Workspace == nil || between.Workspace.UnansweredSince == nil {
		t.Errorf("between the turns: status %s, workspace %s; want waiting_user and unanswered_since set", between.Status, dump(between.Workspace))
	}
	if ws := queryState(t, env).Workspace; ws == nil || ws.UnansweredSince != nil {
		t.Errorf("after a call ran on the host again, state.workspace = %s", dump(ws))
	}
	if _, runs := log.snapshot(); len(runs) != 3 {
		t.Errorf("tool calls = %+v", runs)
	}
}

// When no worker can be the host, the tool calls and subagents are
// refused with that reason, never run on whichever worker, and the next
// call asks again.
func TestWorkspaceHostUnknown(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	scripted(env,
		calls(call("read_file", `{"path":"a.txt"}`)),
		calls(call("spawn_subagent", `{"agent_id":"kid","task":"read a.txt"}`)),
		model.Response{Content: "no host"},
	)
	log := recordTools(env, "", nil)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "read", IdleTimeoutS: 1})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	asked, runs := log.snapshot()
	if asked != 2 || len(runs) != 0 {
		t.Errorf("asked %d times, tool calls %+v; want 2, none", asked, runs)
	}
	var tools []model.Message
	for _, m := range queryMessages(t, env) {
		if m.Role == model.RoleTool {
			tools = append(tools, m)
		}
	}
	if len(tools) != 2 {
		t.Fatalf("tool messages = %s", dump(tools))
	}
	for i, want := range []string{
		"Tool read_file was not run: no worker could take this session's workspace: no host answered",
		`subagent "kid" could not be started: no worker could take this session's workspace`,
	} {
		if !tools[i].IsError || !strings.HasPrefix(tools[i].Content, want) {
			t.Errorf("tool message %d = %q, want %q…", i, tools[i].Content, want)
		}
	}
}

// A shared workspace runs its tools on any worker of the run's queue, its
// subagents' too.
func TestToolsUnpinned(t *testing.T) {
	cases := []struct {
		name   string
		in     api.AgentInput
		shared bool
	}{
		{name: "shared workspace", in: api.AgentInput{Workspace: "/mnt/team/project", WorkspaceShared: true}, shared: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := newTreeEnv()
			scriptTree(env, map[string][]model.Response{
				"main": {calls(call("read_file", `{"path":"a.txt"}`)), calls(spawnCall("kid", "read a.txt", quiet)), say("read")},
				"kid":  {calls(call("read_file", `{"path":"a.txt"}`)), say("kid read")},
			})
			log := recordTools(env, "todoflow-host-a", nil)
			in := rootInput("read")
			in.Workspace, in.WorkspaceShared = tc.in.Workspace, tc.in.WorkspaceShared
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, time.Hour)
			env.ExecuteWorkflow(api.WorkflowName, in)
			completed(t, env)
			asked, runs := log.snapshot()
			if asked != 0 || len(runs) != 2 {
				t.Fatalf("asked %d times, tool calls %+v; want none, two read_file calls", asked, runs)
			}
			for _, r := range runs {
				if r.queue == "todoflow-host-a" {
					t.Errorf("%s's %s ran on a host's queue", r.agent, r.tool)
				}
			}
			for _, id := range []string{treeRoot, childWF("kid")} {
				ws := stateOf(t, env, id).Workspace
				if tc.shared != (ws != nil && ws.Shared && ws.HostQueue == "") || (!tc.shared && ws != nil) {
					t.Errorf("%s's state.workspace = %s", id, dump(ws))
				}
			}
		})
	}
}

// A worker that polls no host queue (built by hand with workflows.Register
// alone) leaves its sessions unpinned: their tools and subagents run from
// the run's own queue, as before hosts existed, and the run asks once.
func TestWorkspaceHostNone(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	scripted(env,
		calls(call("write_file", `{"path":"a.txt","content":"x"}`)),
		calls(call("read_file", `{"path":"a.txt"}`)),
		model.Response{Content: "done"},
	)
	log := recordTools(env, noHostQueue, nil)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "write, then read", IdleTimeoutS: 1})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	asked, runs := log.snapshot()
	if asked != 1 || len(runs) != 2 {
		t.Fatalf("asked %d times, tool calls %+v; want once, two calls", asked, runs)
	}
	for _, r := range runs {
		if r.queue != testQueue {
			t.Errorf("%s ran on queue %q, want the run's own %q", r.tool, r.queue, testQueue)
		}
	}
	for _, m := range queryMessages(t, env) {
		if m.Role == model.RoleTool && m.IsError {
			t.Errorf("tool message %q is an error", m.Content)
		}
	}
	if ws := queryState(t, env).Workspace; ws != nil {
		t.Errorf("state.workspace = %s, want null: no host holds it", dump(ws))
	}
}

// What ends a direct tool call without its having run anywhere: the
// refusal of a worker that is not the host, the not-registered failure of
// a worker older than RunToolOnHost, and a ScheduleToStart timeout. A
// tool's own failure and other timeouts ran (or may have run) the call,
// and must not send it again.
func TestNotRun(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"refused", temporal.NewNonRetryableApplicationError("not the host", activities.ErrTypeNotHost, nil), true},
		{"older worker", temporal.NewNonRetryableApplicationError("unable to find activityType=RunToolOnHost", activityNotRegistered, nil), true},
		{"taken by none", temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil), true},
		{"wrapped refusal", fmt.Errorf("activity: %w", temporal.NewNonRetryableApplicationError("no", activities.ErrTypeNotHost, nil)), true},
		{"the tool failed", temporal.NewApplicationError("disk full", "ToolFailed"), false},
		{"ran out of time", temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_START_TO_CLOSE, nil), false},
		{"heartbeat lost", temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil), false},
		{"success", nil, false},
	}
	for _, tt := range tests {
		if got := notRun(tt.err); got != tt.want {
			t.Errorf("%s: notRun(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}
