package workflows

import (
	"github.com/todoflow/todoflow/api"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/todo"
)

// The page's first line says the status in words, what the session waits
// for, and the step it is on.
func TestHeadline(t *testing.T) {
	tests := []struct {
		name    string
		set     func(a *agent)
		want    []string
		notWant []string
	}{
		{"waiting for its user", func(a *agent) { a.status = api.StatusWaitingUser },
			[]string{"**Waiting for the user's message**"}, []string{"step:"}},
		{"a tool call waits", func(a *agent) {
			a.status = api.StatusAwaitingApproval
			a.approvals.toolWait = &api.PendingApproval{CallID: "c7", Tool: "write_file", Arguments: []byte(`{"path":"notes.md","content":"x"}`)}
		}, []string{"**Waiting for approval**: `write_file` `{\"path\":\"notes.md\",\"content\":\"x\"}` (call c7)"}, nil},
		{"a write waits, with its diff", func(a *agent) {
			a.status = api.StatusAwaitingApproval
			a.approvals.toolWait = &api.PendingApproval{CallID: "c7", Tool: "write_file", Arguments: []byte(`{"path":"notes.md","content":"x"}`),
				Diff: &api.CallDiff{Hunks: "@@ -1 +1,2 @@\n-a\n+x\n+y", Added: 2, Removed: 1}}
		}, []string{"(call c7), diff: +2 −1 lines"}, nil},
		{"a write waits, its diff only a note", func(a *agent) {
			a.status = api.StatusAwaitingApproval
			a.approvals.toolWait = &api.PendingApproval{CallID: "c7", Tool: "write_file", Arguments: []byte(`{"path":"notes.md","content":"x"}`),
				Diff: &api.CallDiff{Hunks: `\ no change: the file already had this content`}}
		}, []string{"(call c7)"}, []string{"diff:"}},
		{"arguments with backticks stay in their code span", func(a *agent) {
			a.status = api.StatusAwaitingApproval
			a.approvals.toolWait = &api.PendingApproval{CallID: "c1", Tool: "run", Arguments: []byte("{\"cmd\":\"echo `date`\"}")}
		}, []string{"``{\"cmd\":\"echo `date`\"}``"}, nil},
		{"a plan waits", func(a *agent) {
			a.status = api.StatusAwaitingApproval
			a.plans.Plan = &todo.Plan{PlanID: "plan_1", Title: "Refactor auth", Steps: []todo.Step{{StepID: "step_1"}, {StepID: "step_2"}}}
			a.plans.AwaitingApproval, a.plans.ApprovalMessage = true, "Ready?"
		}, []string{"**Waiting for approval**: plan `Refactor auth`, 2 steps"}, nil},
		{"paused", func(a *agent) {
			a.status = api.StatusPaused
			a.todo.Paused, a.todo.PauseReason = true, "needs the API key"
		}, []string{"**Paused**: agent `main` is paused (needs the API key); resume it"}, nil},
		{"working on an item", func(a *agent) {
			a.todo.Todos = []todo.Item{{ID: "1", Content: "Read the logs", Status: todo.Completed}, {ID: "2", Content: "Fix the\nparser", Status: todo.InProgress}}
		}, []string{"**Working** · step: Fix the parser"}, nil},
		{"working on a plan's step", func(a *agent) {
			a.plans.Plan = &todo.Plan{PlanID: "plan_1", Title: "t", Steps: []todo.Step{{StepID: "step_1", Description: "Ship it", Status: todo.StepInProgress}}}
		}, []string{"**Working** · step: Ship it"}, nil},
		{"the model failing", func(a *agent) { a.modelError = &api.ModelError{Message: "503"} },
			[]string{"**Working**: the model is failing, retrying"}, nil},
		{"completed, its wait no longer shown", func(a *agent) {
			a.status = api.StatusCompleted
			a.approvals.toolWait = &api.PendingApproval{CallID: "c7", Tool: "write_file"}
		}, []string{"**Completed**"}, []string{"write_file"}},
		{"continued", func(a *agent) { a.status = api.StatusContinued }, []string{"**Continued in a new run**"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := resolve(api.AgentInput{}) // a session waiting for its first message: nothing queued
			if err != nil {
				t.Fatal(err)
			}
			a := newAgent(cfg)
			tt.set(a)
			d := a.details()
			first, _, _ := strings.Cut(d, "\n")
			for _, w := range tt.want {
				if !strings.Contains(first, w) {
					t.Errorf("headline %q lacks %q", first, w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(first, w) {
					t.Errorf("headline %q has %q", first, w)
				}
			}
		})
	}
}
