package workflows

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
)

// A lean run upserts its search attributes only when the run list would
// otherwise be wrong: not what it was started with, and while it is busy
// at most once a second and (patchLeanTurn) not in its first
// listBusyAfter; every status it waits in is sent at once.
func TestLeanPublishing(t *testing.T) {
	list := func(a, b string) model.Response {
		return calls(call("write_todos", fmt.Sprintf(`{"todos":[{"content":"a","status":%q},{"content":"b","status":%q}]}`, a, b)))
	}
	answers := []model.Response{
		list("in_progress", "pending"),
		list("completed", "in_progress"),
		list("completed", "completed"),
		{Content: "done"},
	}
	tests := []struct {
		name    string
		started bool // with StartSearchAttributes
		stale   bool // with what a continued run inherits, no prompt
		// unpatched replays a run an older build started (patches.go).
		unpatched bool
		takes     []time.Duration // each model call's time
		want      []string
	}{
		{
			name:  "a continued run waiting for its user",
			stale: true,
			want:  []string{"waiting_user 0/0", "completed 0/0"},
		},
		{
			name:    "quick steps, started with its attributes",
			started: true,
			takes:   []time.Duration{0, 0, 0, 0},
			want:    []string{"waiting_user 2/2", "completed 2/2"},
		},
		{
			name:  "quick steps, started without",
			takes: []time.Duration{0, 0, 0, 0},
			want:  []string{"running 0/0", "waiting_user 2/2", "completed 2/2"},
		},
		{
			name:    "steps slower than publishEvery, in a turn shorter than listBusyAfter",
			started: true,
			takes:   []time.Duration{2 * time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second},
			want:    []string{"waiting_user 2/2", "completed 2/2"},
		},
		{
			name:      "before patchLeanTurn, steps slower than publishEvery",
			started:   true,
			unpatched: true,
			takes:     []time.Duration{2 * time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second},
			want:      []string{"running 0/2 a", "running 1/2 b", "running 2/2", "waiting_user 2/2", "completed 2/2"},
		},
		{
			name:    "a turn longer than listBusyAfter",
			started: true,
			takes:   []time.Duration{6 * time.Second, 6 * time.Second, 6 * time.Second, 6 * time.Second},
			want:    []string{"running 1/2 b", "running 2/2", "waiting_user 2/2", "completed 2/2"},
		},
		{
			name:    "a change held back goes out at the next step after a second",
			started: true,
			takes:   []time.Duration{0, 11 * time.Second, 0, 0},
			want:    []string{"running 1/2 b", "waiting_user 2/2", "completed 2/2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			scripted(env) // registers the activities the mock below stands in for
			if tt.unpatched {
				env.OnGetVersion(patchLeanTurn, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
			}
			n := 0
			env.OnActivity(api.ModelCallActivity, mock.Anything, mock.Anything).
				AfterFn(func() time.Duration {
					if n++; n > len(tt.takes) {
						return 0
					}
					return tt.takes[n-1]
				}).
				Return(func(_ context.Context, in activities.CallModelInput) (model.Response, error) {
					r := answers[min(in.Call, len(answers))-1]
					for i := range r.ToolCalls {
						r.ToolCalls[i].ID = fmt.Sprintf("c%d-%d", in.Call, i)
					}
					return r, nil
				})
			var got []string
			env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
				got = append(got, shownAttributes(args.Get(0).(temporal.SearchAttributes)))
			}).Return(nil)
			if tt.started {
				if err := env.SetTypedSearchAttributesOnStart(api.StartSearchAttributes()); err != nil {
					t.Fatal(err)
				}
			}
			in := api.AgentInput{Prompt: "two things", Todo: todoPolicy("")}
			if tt.stale {
				in.Prompt = ""
				err := env.SetTypedSearchAttributesOnStart(temporal.NewSearchAttributes(api.TodoTotalKey.ValueSet(0), api.TodoCompletedKey.ValueSet(0),
					api.TodoCurrentKey.ValueSet(""), api.AgentStatusKey.ValueSet(api.StatusAwaitingApproval)))
				if err != nil {
					t.Fatal(err)
				}
			}
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(api.EndSessionSignal, nil) }, time.Hour)
			env.ExecuteWorkflow(AgentWorkflow, in)
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("upserts %q, want %q", got, tt.want)
			}
			if st := queryState(t, env); st.Status != api.StatusCompleted {
				t.Errorf("state %s, want completed", st.Status)
			}
		})
	}
}

// shownAttributes is an upsert as "status done/total current".
func shownAttributes(sa temporal.SearchAttributes) string {
	status, _ := sa.GetKeyword(api.AgentStatusKey)
	total, _ := sa.GetInt64(api.TodoTotalKey)
	done, _ := sa.GetInt64(api.TodoCompletedKey)
	s := fmt.Sprintf("%s %d/%d", status, done, total)
	if cur, _ := sa.GetKeyword(api.TodoCurrentKey); cur != "" {
		s += " " + cur
	}
	return s
}

// Runs continued as new start with what the run before them published, and
// do not upsert it again; nor do subagents, which their parents start with
// StartSearchAttributes.
func TestStartedWith(t *testing.T) {
	tests := []struct {
		name string
		sa   temporal.SearchAttributes
		want published
	}{
		{"none", temporal.NewSearchAttributes(), published{}},
		{"the start's", api.StartSearchAttributes(), published{status: api.StatusRunning, set: true}},
		{"a continued run's", temporal.NewSearchAttributes(api.TodoTotalKey.ValueSet(3), api.TodoCompletedKey.ValueSet(1),
			api.TodoCurrentKey.ValueSet("b"), api.AgentStatusKey.ValueSet(api.StatusWaitingUser)),
			published{total: 3, completed: 1, current: "b", status: api.StatusWaitingUser, set: true}},
		{"three of four", temporal.NewSearchAttributes(api.TodoTotalKey.ValueSet(0), api.TodoCompletedKey.ValueSet(0),
			api.AgentStatusKey.ValueSet(api.StatusRunning)), published{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			if err := env.SetTypedSearchAttributesOnStart(tt.sa); err != nil {
				t.Fatal(err)
			}
			var got published
			env.ExecuteWorkflow(func(ctx workflow.Context) error {
				got = startedWith(ctx)
				return nil
			})
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			if !got.same(tt.want) {
				t.Errorf("startedWith = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// The run's page has a line for every wait a human may answer, the agent's
// own tool approval included, and lists at most detailsChildren subagents.
func TestDetailsShowWaitsAndStayShort(t *testing.T) {
	cfg, err := resolve(api.AgentInput{Prompt: "go"})
	if err != nil {
		t.Fatal(err)
	}
	a := newAgent(cfg)
	a.approvals.toolWait = &api.PendingApproval{CallID: "c7", Tool: "write_file", Arguments: []byte(`{"path":"a"}`)}
	for i := range detailsChildren + 10 {
		id := fmt.Sprintf("kid%02d", i)
		a.tree.children[id] = &child{AgentID: id, Done: true, State: &api.State{AgentID: id, Status: api.StatusCompleted}}
		a.tree.childOrder = append(a.tree.childOrder, id)
	}
	a.append(model.Message{Role: model.RoleUser, Content: "Fix the flaky test\nin the parser"})
	d := a.details()
	for _, want := range []string{"### Fix the flaky test\n", "**waiting** (tool_approval): call c7 of write_file", "subagent **kid29**", "and 10 earlier subagents"} {
		if !strings.Contains(d, want) {
			t.Errorf("details lack %q:\n%s", want, d)
		}
	}
	if strings.Contains(d, "subagent **kid09**") {
		t.Errorf("details list more than the %d most recent subagents:\n%s", detailsChildren, d)
	}
}

// A run that continues as new says so in the run list: its last AgentStatus
// is continued, not the running or waiting it said before.
func TestContinuedRunShowsContinued(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	scripted(env, model.Response{Content: "done"})
	var last string
	env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
		sa := args.Get(0).(temporal.SearchAttributes)
		if st, ok := sa.GetKeyword(api.AgentStatusKey); ok {
			last = st
		}
	}).Return(nil)
	env.SetContinueAsNewSuggested(true)
	env.ExecuteWorkflow(AgentWorkflow, api.AgentInput{Prompt: "go", IdleTimeoutS: 3600})
	var can *workflow.ContinueAsNewError
	if !asContinueAsNew(env.GetWorkflowError(), &can) {
		t.Fatalf("want continue-as-new, got %v", env.GetWorkflowError())
	}
	if last != api.StatusContinued {
		t.Errorf("the last AgentStatus upserted is %q, want %q", last, api.StatusContinued)
	}
}
