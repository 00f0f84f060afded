package client

import (
	"reflect"
	"slices"
	"time"

	"github.com/todoflow/todoflow/api"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// Event is what Watch reports: one of the types below, each a change since
// the previous look (the first look reports what is).
type Event interface{ event() }

// StateChanged carries a new answer of the state query, whole, read at At.
// The changes in it follow as their own events.
type StateChanged struct {
	State api.State
	At    time.Time
}

// StatusChanged: the agent's status (api.Status*: running,
// waiting_user, awaiting_approval, paused, blocked, completed, failed).
type StatusChanged struct{ Status string }

// TodosChanged: the todo list.
type TodosChanged struct{ Todos []todo.Item }

// PlanChanged: the plan (nil before the first).
type PlanChanged struct{ Plan *todo.Plan }

// WaitsChanged: the human waits of the agent tree (a pause, a plan or a
// tool call to approve); Pending is the root agent's own tool call that
// waits, whose CallID an approval must name (AnswerTo).
type WaitsChanged struct {
	Waiting []api.Wait
	Pending *api.PendingApproval
}

// ModelErrorChanged: a model call is failing and retried, or failed for
// good and ended the turn (Err, with the provider's message as its cause);
// Err is nil once that is over.
type ModelErrorChanged struct {
	Err *api.ModelError
	// Retry is what the server's retries of the call show (Watch's only).
	Retry Retry
}

// TaskEvent is a plan event of an agent of the tree (step started,
// completed, blocked, …), new since the previous look.
type TaskEvent struct{ Event todo.Event }

// NewMessage is a transcript message not reported before, in the order of
// the transcript: the user's, the agent's replies and tool calls, the
// tools' results, the reminders the loop injects. The first look reports
// the whole transcript so far.
type NewMessage struct {
	Message model.Message
	// Diff, on a tool's result, is what the call changed, for the user
	// and never in the message the model reads: write_file's diff of the
	// file, as the hunks of a unified diff ('@' headers, ' ' context, '-'
	// removed, '+' added, '\' notes), at most 16 KiB. Empty when the tool
	// shows none, or when the result is older than the latest few diffs
	// the session keeps (a client attaching late sees those only).
	Diff string
}

// StreamChanged: the root agent's reply as its model call writes it (from
// the worker that runs the call, or the call's heartbeats: never history).
// Running is false once no call runs; the reply then comes as a NewMessage. Text is the reply so far (its
// end, Cut bytes left out before it, when it is long); "" while the call
// has written nothing. Attempt is the call's attempt (from 1): the server
// retries a failed call as its next attempt, which writes the reply anew.
type StreamChanged struct {
	Running bool
	Call    int
	Text    string
	Cut     int
	Attempt int32
}

// ToolsChanged: the root agent's tools that are running, with what each
// last said of its progress.
type ToolsChanged struct{ Running []RunningTool }

// RunningTool is a tool call that runs (from its heartbeat: never
// history): the tool's name, and its progress when it reports any (an MCP
// server's progress notifications), as of the latest heartbeat the server
// has, which the worker sends every few seconds.
type RunningTool struct {
	Name     string
	Progress float64 // grows as the tool works; 0 before its first report
	Total    float64 // 0 when the tool does not say
	Message  string  // at most a line
}

// Closed: the session's run has ended (after continue-as-new: the last
// one); Status says how (RunCompleted, RunFailed, …). It is the last event
// once a state after it was read.
type Closed struct{ Status string }

// Problem: a look at the session failed (Err, with its cause: the server
// cannot be reached, no worker answers the queries, no such session), or
// works again (Err nil). The watch goes on.
type Problem struct{ Err error }

// Looked ends the events of one look that had news, or a StreamChanged
// that came between two looks: the events before it tell the session as
// it stood at one moment, so a client that acts on what it saw (reads its
// next line, redraws) waits for it.
type Looked struct{ At time.Time }

func (StateChanged) event()      {}
func (StatusChanged) event()     {}
func (TodosChanged) event()      {}
func (PlanChanged) event()       {}
func (WaitsChanged) event()      {}
func (ModelErrorChanged) event() {}
func (TaskEvent) event()         {}
func (NewMessage) event()        {}
func (StreamChanged) event()     {}
func (ToolsChanged) event()      {}
func (Closed) event()            {}
func (Problem) event()           {}
func (Looked) event()            {}

// changes are the events that tell what changed from prev (nil: nothing
// seen yet) to cur, StateChanged first.
func changes(prev *api.State, cur api.State, at time.Time) []Event {
	evs := []Event{StateChanged{State: cur, At: at}}
	if prev == nil {
		prev = &api.State{}
		evs = append(evs, StatusChanged{cur.Status}) // even "" is news at first
	} else if cur.Status != prev.Status {
		evs = append(evs, StatusChanged{cur.Status})
	}
	if !todo.Equal(cur.Todos, prev.Todos) {
		evs = append(evs, TodosChanged{cur.Todos})
	}
	if !reflect.DeepEqual(cur.Plan, prev.Plan) {
		evs = append(evs, PlanChanged{cur.Plan})
	}
	// slices.Equal: an empty list and none alike.
	if !slices.Equal(cur.Waiting, prev.Waiting) || !reflect.DeepEqual(cur.PendingApproval, prev.PendingApproval) {
		evs = append(evs, WaitsChanged{Waiting: cur.Waiting, Pending: cur.PendingApproval})
	}
	if !reflect.DeepEqual(cur.ModelError, prev.ModelError) {
		evs = append(evs, ModelErrorChanged{Err: cur.ModelError})
	}
	last := -1
	for _, e := range prev.Events {
		last = max(last, e.EventID)
	}
	for _, e := range cur.Events {
		if e.EventID > last {
			evs = append(evs, TaskEvent{e})
		}
	}
	return evs
}
