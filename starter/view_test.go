package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"
)

// treeState is a state query answer (trimmed to what the views read) with
// nested subagents: main has coder (with tester under it) and researcher.
const treeState = `{
  "agent_id": "main", "status": "blocked", "turns": 1, "model_calls": 4,
  "todos": [
    {"id": "1", "content": "Split the work", "status": "completed", "priority": ""},
    {"id": "2", "content": "Merge the results", "status": "in_progress", "priority": ""},
    {"id": "3", "content": "Report", "status": "pending", "priority": ""}
  ],
  "plan": {"plan_id": "plan_1", "title": "Ship it", "status": "active", "started": true,
    "steps": [
      {"step_id": "step_1", "sequence": 1, "description": "Research", "status": "completed"},
      {"step_id": "step_2", "sequence": 2, "description": "Code", "status": "completed"},
      {"step_id": "step_3", "sequence": 3, "description": "Review the results", "status": "blocked",
       "blocked_by": [{"agent_id": "coder", "step_id": "step_1"}]}
    ]},
  "paused": false, "pause_reason": "", "awaiting_approval": false, "continuation": true,
  "subagents": {
    "researcher": {"agent_id": "researcher", "status": "paused", "turns": 1, "model_calls": 3,
      "todos": [{"id": "1", "content": "Read", "status": "in_progress", "priority": ""}],
      "paused": true, "pause_reason": "no access to\n the wiki", "subagents": {}},
    "coder": {"agent_id": "coder", "status": "running", "turns": 1, "model_calls": 2,
      "todos": [],
      "plan": {"plan_id": "plan_1", "title": "Code", "status": "active", "started": true,
        "steps": [{"step_id": "step_1", "sequence": 1, "description": "Write", "status": "in_progress"}]},
      "subagents": {
        "tester": {"agent_id": "tester", "status": "completed", "turns": 1, "model_calls": 1,
          "todos": [{"id": "1", "content": "Test", "status": "completed", "priority": ""}],
          "subagents": {}},
        "linter": {"agent_id": "linter", "status": "running", "turns": 1, "model_calls": 1,
          "todos": [], "subagents": {
            "formatter": {"agent_id": "formatter", "status": "running", "turns": 0, "model_calls": 0}}}
      }}
  }
}`

func decodeState(t *testing.T, s string) api.State {
	t.Helper()
	var st api.State
	if err := json.Unmarshal([]byte(s), &st); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestAgentTree(t *testing.T) {
	st := decodeState(t, treeState)
	want := `wf-1 (main): blocked, turn 1, 4 model calls, todos 1/3, plan 2/3 (66.7%)
├─ coder: running, turn 1, 2 model calls, todos 0/0, plan 0/1 (0%)
│  ├─ linter: running, turn 1, 1 model calls, todos 0/0
│  │  └─ formatter: running, turn 0, 0 model calls, todos 0/0
│  └─ tester: completed, turn 1, 1 model calls, todos 1/1
└─ researcher: paused, turn 1, 3 model calls, todos 0/1, paused: no access to the wiki
`
	if got := agentTree("wf-1", st); got != want {
		t.Errorf("agentTree:\n%s\nwant:\n%s", got, want)
	}
}

func TestAgentTreeAlone(t *testing.T) {
	st := api.State{AgentID: "main", Status: "paused", Turns: 2, ModelCalls: 5, Paused: true, PauseReason: "need the password"}
	want := "wf-2 (main): paused, turn 2, 5 model calls, todos 0/0, paused: need the password\n"
	if got := agentTree("wf-2", st); got != want {
		t.Errorf("agentTree = %q, want %q", got, want)
	}
}

func TestPrintState(t *testing.T) {
	st := decodeState(t, treeState)
	st.Subagents = nil
	st.AwaitingApproval = true
	var b strings.Builder
	printState(&b, "wf-1", st)
	want := `wf-1 (main): blocked, turn 1, 4 model calls, todos 1/3, plan 2/3 (66.7%)

- [x] Split the work
- [>] Merge the results
- [ ] Report

Done: 1/3

Current Plan: Ship it
Status: active

Steps:
  [x] step_1: Research
  [x] step_2: Code
  [~] step_3: Review the results (waiting on coder:step_1)

Progress: 2/3 (66.7%)

Awaiting approval: run "starter approve wf-1" or "starter reject wf-1 --feedback TEXT"
`
	if got := b.String(); got != want {
		t.Errorf("printState:\n%s\nwant:\n%s", got, want)
	}
}

func TestPrintStateNoPlan(t *testing.T) {
	var b strings.Builder
	printState(&b, "wf-3", api.State{AgentID: "main", Status: "running"})
	want := "wf-3 (main): running, turn 0, 0 model calls, todos 0/0\n\n(no todo items)\n"
	if got := b.String(); got != want {
		t.Errorf("printState = %q, want %q", got, want)
	}
}

func TestPlanNotes(t *testing.T) {
	cases := []struct {
		st   api.State
		want []string
	}{
		{api.State{Status: "running"}, nil},
		{api.State{Status: "paused", Paused: true, PauseReason: "waiting for\nthe keys"}, []string{"Paused: waiting for the keys"}},
		{api.State{Status: "awaiting_approval", AwaitingApproval: true},
			[]string{`Awaiting approval: run "starter approve wf-1" or "starter reject wf-1 --feedback TEXT"`}},
		{api.State{AgentID: "main", Status: "paused", Waiting: []api.Wait{{AgentID: "fixer", Kind: api.WaitPaused, Reason: "no\npassword"}}},
			[]string{`Subagent fixer is paused: no password (run "starter resume wf-1 --agent fixer TEXT")`}},
		{api.State{AgentID: "main", Status: "awaiting_approval", AwaitingApproval: true, Waiting: []api.Wait{
			{AgentID: "main", Kind: api.WaitPlanApproval}, {AgentID: "impl", Kind: api.WaitPlanApproval}}},
			[]string{`Awaiting approval: run "starter approve wf-1" or "starter reject wf-1 --feedback TEXT"`,
				`Subagent impl's plan awaits approval (run "starter approve wf-1 --agent impl" or "starter reject wf-1 --agent impl --feedback TEXT")`}},
	}
	for _, tc := range cases {
		got := planNotes("wf-1", tc.st)
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("planNotes(%+v) = %q, want %q", tc.st, got, tc.want)
		}
	}
}

func TestPausedAgent(t *testing.T) {
	paused := func(ids ...string) []api.Wait {
		var ws []api.Wait
		for _, id := range ids {
			ws = append(ws, api.Wait{AgentID: id, Kind: api.WaitPaused})
		}
		return ws
	}
	cases := []struct {
		name, agent string
		st          api.State
		want, err   string
	}{
		{"the root itself, older run", "", api.State{AgentID: "main", Paused: true}, "main", ""},
		{"the only paused subagent", "", api.State{AgentID: "main", Waiting: paused("fixer")}, "fixer", ""},
		{"several: must pick", "", api.State{AgentID: "main", Waiting: paused("a", "b")}, "", "agents a, b are paused; name one with --agent"},
		{"picked", "b", api.State{AgentID: "main", Waiting: paused("a", "b")}, "b", ""},
		{"picked one that is not paused", "c", api.State{AgentID: "main", Status: "paused", Waiting: paused("a")}, "", "agent c is not paused (status paused); nothing to resume"},
		{"nothing paused", "", api.State{AgentID: "main", Status: "running"}, "", "no agent of the run is paused (status running); nothing to resume"},
		{"a plan approval is not a pause", "", api.State{AgentID: "main", Status: "awaiting_approval",
			Waiting: []api.Wait{{AgentID: "x", Kind: api.WaitPlanApproval}}}, "", "no agent of the run is paused (status awaiting_approval); nothing to resume"},
	}
	for _, tc := range cases {
		got, err := pausedAgent(tc.st, tc.agent)
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("%s: pausedAgent = %q, %v; want %q, %q", tc.name, got, err, tc.want, tc.err)
		}
	}
}

func TestWorkspaceNote(t *testing.T) {
	since := time.Date(2026, 5, 1, 10, 4, 0, 0, time.UTC)
	cases := []struct {
		ws   *api.WorkspaceState
		want string
	}{
		{nil, ""},
		{&api.WorkspaceState{Shared: true}, "Workspace: shared, tools run on any worker"},
		{&api.WorkspaceState{HostQueue: "todoflow-host-a-1234"}, "Workspace: on host todoflow-host-a-1234"},
		{&api.WorkspaceState{HostQueue: "todoflow-host-a-1234", UnansweredSince: &since},
			"Workspace: on host todoflow-host-a-1234, NOT ANSWERING since 2026-05-01T10:04:00Z: tool calls fail until a worker with that host queue is back"},
	}
	for _, tc := range cases {
		if got := workspaceNote(tc.ws); got != tc.want {
			t.Errorf("workspaceNote(%+v) = %q, want %q", tc.ws, got, tc.want)
		}
	}
	var b strings.Builder
	printState(&b, "wf-4", api.State{AgentID: "main", Status: "waiting_user", Workspace: &api.WorkspaceState{HostQueue: "h1"}, Session: "5e55"})
	if want := "wf-4 (main): waiting_user, turn 0, 0 model calls, todos 0/0\nWorkspace: on host h1\n" +
		"Session folders: sessions/5e55 (the workspace, unless the run names one) and reports/5e55/, in the worker's state folder\n\n(no todo items)\n"; b.String() != want {
		t.Errorf("printState = %q, want %q", b.String(), want)
	}
}
