package client

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/todoflow/todoflow/todo"
	"github.com/todoflow/todoflow/workflows"
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
	wait := []workflows.Wait{{AgentID: "main", Kind: workflows.WaitToolApproval, CallID: "c1"}}
	ev := func(id int, typ string) todo.Event { return todo.Event{EventID: id, Type: typ} }
	running := workflows.State{Status: workflows.StatusRunning, Todos: items}

	for _, tt := range []struct {
		name string
		prev *workflows.State
		cur  workflows.State
		want []string
	}{
		{"first look", nil, running, []string{"state", "status running", "todos 1"}},
		{"first look, empty", nil, workflows.State{Status: workflows.StatusWaitingUser}, []string{"state", "status waiting_user"}},
		{"nothing new", &running, running, []string{"state"}},
		{"list done, turn over", &running, workflows.State{Status: workflows.StatusWaitingUser, Todos: done},
			[]string{"state", "status waiting_user", "todos 1"}},
		{"a plan and its events", &running,
			workflows.State{Status: workflows.StatusRunning, Todos: items, Plan: plan, Events: []todo.Event{ev(1, "plan_created"), ev(2, "step_started")}},
			[]string{"state", "plan", "event plan_created", "event step_started"}},
		{"only the new events", &workflows.State{Status: workflows.StatusRunning, Events: []todo.Event{ev(1, "plan_created")}},
			workflows.State{Status: workflows.StatusRunning, Events: []todo.Event{ev(1, "plan_created"), ev(2, "plan_started")}},
			[]string{"state", "event plan_started"}},
		{"a call waits", &running,
			workflows.State{Status: workflows.StatusAwaitingApproval, Todos: items, Waiting: wait, PendingApproval: &workflows.PendingApproval{CallID: "c1"}},
			[]string{"state", "status awaiting_approval", "waits 1"}},
		{"no waits and an empty list are alike", &workflows.State{Status: workflows.StatusRunning, Waiting: []workflows.Wait{}},
			workflows.State{Status: workflows.StatusRunning}, []string{"state"}},
		{"the model fails", &running,
			workflows.State{Status: workflows.StatusRunning, Todos: items, ModelError: &workflows.ModelError{Message: "503", Attempts: 2}},
			[]string{"state", "model error true"}},
		{"and recovers", &workflows.State{Status: workflows.StatusRunning, Todos: items, ModelError: &workflows.ModelError{Message: "503"}},
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
