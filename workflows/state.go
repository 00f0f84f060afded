package workflows

import (
	"cmp"

	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/internal/text"
	"github.com/todoflow/todoflow/todo"
)

// Bounds of the payloads that carry a state (the state query, AgentResult,
// task_event, the carry), whatever the run's length and the tree's size;
// docs/protocol.md, "The carry", says what each shows.
const (
	// maxStateEvents is how many of the latest events a state shows, in at
	// most stateEventBytes; the whole log is in the run's history.
	maxStateEvents  = 100
	stateEventBytes = 64 << 10
	// childEvents is how many of a child's latest events its parent shows.
	childEvents = 20
	// fullChildren is how many of the finished children, the most recent,
	// a state shows as their summary, in at most fullChildrenBytes
	// together; the others, up to maxChildren, as ended (about 300 bytes),
	// and older ones are only counted (subagents_pruned).
	fullChildren      = 20
	fullChildrenBytes = 128 << 10
	maxChildren       = 200
	// resultHead is how much of a finished child's answer its summary keeps.
	resultHead = 200
	// carryEvents is how many of the latest events a continuation carries,
	// in at most carryEventBytes, besides what dependency resolution needs
	// (todo.PlanState.Prune).
	carryEvents     = 200
	carryEventBytes = 128 << 10
)

// model is the agent's model as state.model says it: the input's
// reference, or, when it names none, the worker's default model as the
// latest call (or the run before, carried) reported it.
func (a *agent) model() string { return cmp.Or(a.cfg.in.Model, a.served) }

func (a *agent) state() api.State {
	events := a.plans.Events
	if events == nil {
		events = []todo.Event{}
	}
	st := api.State{
		AgentID:          a.cfg.AgentID,
		Status:           a.shownStatus(),
		Turns:            a.turns,
		ModelCalls:       a.modelCalls,
		Todos:            a.todo.List(),
		Extra:            a.todo.Extra(),
		Paused:           a.todo.Paused,
		PauseReason:      a.todo.PauseReason,
		Continuation:     a.continuation,
		Plan:             a.plans.Current(),
		AwaitingApproval: a.plans.AwaitingApproval || a.approvals.toolWait != nil,
		PendingApproval:  a.approvals.toolWait,
		Events:           todo.Latest(events, maxStateEvents, stateEventBytes),
		EventsTotal:      a.plans.Pruned + len(events),
		Subagents:        a.subagentStates(),
		SubagentsPruned:  a.tree.pruned + max(0, a.finishedChildren()-maxChildren),
		Reporters:        a.reporters.states(),
		ModelError:       a.modelError,
		Usage:            a.usage,
		Model:            a.model(),
		TreeUsage:        a.treeUsage(),
		Compactions:      a.window.comp.Count,
		Waiting:          []api.Wait{},
		Workspace:        a.host.state(),
		Session:          a.cfg.session,
	}
	if ws := a.waiting(); ws != nil {
		st.Waiting = ws
	}
	return st
}

// summary is a state as a parent keeps it for a child: its own figures,
// list and plan and its latest childEvents events, without its own
// subagents (each agent's run answers for those), so that a parent's state
// grows with its children, not with its whole tree's history.
func summary(s api.State) api.State {
	s.Events = todo.Latest(s.Events, childEvents, stateEventBytes/4)
	if s.Events == nil {
		s.Events = []todo.Event{}
	}
	if len(s.Subagents) > 0 {
		s.Subagents = map[string]api.State{}
	}
	return s
}

// ended is a finished child's bounded summary, with the head of its answer.
func ended(s api.State, reply string) api.State {
	e := &api.EndedChild{TodosTotal: len(s.Todos), TodosCompleted: todo.CountStatus(s.Todos, todo.Completed), Result: text.Cut(reply, resultHead)}
	if s.Ended != nil {
		e = s.Ended // already summarised, in an earlier run
	} else if p := s.Plan; p != nil {
		e.PlanStatus, e.StepsTotal = p.Status, len(p.Steps)
		for _, st := range p.Steps {
			if st.Status == todo.StepCompleted {
				e.StepsCompleted++
			}
		}
	}
	return api.State{AgentID: s.AgentID, Status: s.Status, Turns: s.Turns, ModelCalls: s.ModelCalls, Usage: s.Usage, Model: s.Model, TreeUsage: s.TreeUsage,
		Todos: []todo.Item{}, Events: []todo.Event{}, Subagents: map[string]api.State{}, Ended: e}
}
