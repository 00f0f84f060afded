package client

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/todoflow/todoflow/todo"
)

// kinds names the events, in order, for comparison.
func kinds(evs []Event) []string {
	var out []string
	for _, e := range evs {
		switch e := e.(type) {
		case StateChanged:
			out = append(out, "state")
		case StatusChanged:
			out = append(out, "status "+e.Status)
		case TodosChanged:
			out = append(out, fmt.Sprintf("todos %d", len(e.Todos)))
		case PlanChanged:
			out = append(out, "plan")
		case WaitsChanged:
			out = append(out, fmt.Sprintf("waits %d", len(e.Waiting)))
		case ModelErrorChanged:
			out = append(out, fmt.Sprintf("model error %v", e.Err != nil))
		case TaskEvent:
			out = append(out, "event "+e.Event.Type)
		default:
			out = append(out, fmt.Sprintf("%T", e))
		}
	}
	return out
}

func TestChanges(t *testing.T) {
	items := []todo.Item{{ID: "1", Content: "Read the code", Status: todo.InProgress}}
	done := []todo.Item{{ID: "1", Content: "Read the code", Status: todo.Completed}}
	plan := &todo.Plan{PlanID: "p1", Title: "Fix"}
	wait := []api.Wait{{AgentID: "main", Kind: api.WaitToolApproval, CallID: "c1"}}
	ev := func(id int, typ string) todo.Event { return todo.Event{EventID: id, Type: typ} }
	running := api.State{Status: api.StatusRunning, Todos: items}

	for _, tt := range []struct {
		name string
		prev *api.State
		cur  api.State
		want []string
	}{
		{"first look", nil, running, []string{"state", "status running", "todos 1"}},
		{"first look, empty", nil, api.State{Status: api.StatusWaitingUser}, []string{"state", "status waiting_user"}},
		{"nothing new", &running, running, []string{"state"}},
		{"list done, turn over", &running, api.State{Status: api.StatusWaitingUser, Todos: done},
			[]string{"state", "status waiting_user", "todos 1"}},
		{"a plan and its events", &running,
			api.State{Status: api.StatusRunning, Todos: items, Plan: plan, Events: []todo.Event{ev(1, "plan_created"), ev(2, "step_started")}},
			[]string{"state", "plan", "event plan_created", "event step_started"}},
		{"only the new events", &api.State{Status: api.StatusRunning, Events: []todo.Event{ev(1, "plan_created")}},
			api.State{Status: api.StatusRunning, Events: []todo.Event{ev(1, "plan_created"), ev(2, "plan_started")}},
			[]string{"state", "event plan_started"}},
		{"a call waits", &running,
			api.State{Status: api.StatusAwaitingApproval, Todos: items, Waiting: wait, PendingApproval: &api.PendingApproval{CallID: "c1"}},
			[]string{"state", "status awaiting_approval", "waits 1"}},
		{"no waits and an empty list are alike", &api.State{Status: api.StatusRunning, Waiting: []api.Wait{}},
			api.State{Status: api.StatusRunning}, []string{"state"}},
		{"the model fails", &running,
			api.State{Status: api.StatusRunning, Todos: items, ModelError: &api.ModelError{Message: "503", Attempts: 2}},
			[]string{"state", "model error true"}},
		{"and recovers", &api.State{Status: api.StatusRunning, Todos: items, ModelError: &api.ModelError{Message: "503"}},
			running, []string{"state", "model error false"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := kinds(changes(tt.prev, tt.cur, time.Now()))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("changes = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRunStatus(t *testing.T) {
	for st, want := range map[enumspb.WorkflowExecutionStatus]string{
		enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:    RunRunning,
		enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:  RunCompleted,
		enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:     RunFailed,
		enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED: RunTerminated,
		enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:   RunCanceled,
		enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:  RunTimedOut,
	} {
		if got := runStatus(st); got != want {
			t.Errorf("runStatus(%v) = %q, want %q", st, got, want)
		}
	}
}
