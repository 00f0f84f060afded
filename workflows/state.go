package workflows

import (
	"github.com/todoflow/todoflow/todo"
)

// State is the answer of the state query (CONTRACT.md, `starter run --json`).
type State struct {
	AgentID          string           `json:"agent_id"`
	Status           string           `json:"status"`
	Turns            int              `json:"turns"`
	ModelCalls       int              `json:"model_calls"`
	Todos            []todo.Item      `json:"todos"`
	Plan             *todo.Plan       `json:"plan"`
	Extra            todo.Extra       `json:"extra"`
	Paused           bool             `json:"paused"`
	PauseReason      string           `json:"pause_reason"`
	AwaitingApproval bool             `json:"awaiting_approval"`
	Continuation     bool             `json:"continuation"`
	Events           []todo.Event     `json:"events"`
	Subagents        map[string]State `json:"subagents"`
	Reporters        []ReporterStatus `json:"reporters"`
}

func (a *agent) state() State {
	return State{
		AgentID:          a.cfg.agentID,
		Status:           a.status,
		Turns:            a.turns,
		ModelCalls:       a.modelCalls,
		Todos:            a.todo.List(),
		Extra:            a.todo.Extra(),
		Paused:           a.todo.Paused,
		PauseReason:      a.todo.PauseReason,
		Continuation:     a.continuation,
		Plan:             a.plans.Current(),
		AwaitingApproval: a.plans.AwaitingApproval,
		Events:           a.events(),
		Subagents:        a.subagentStates(),
		Reporters:        a.reporterStates(),
	}
}

func (a *agent) events() []todo.Event {
	if a.plans.Events == nil {
		return []todo.Event{}
	}
	return a.plans.Events
}

// compactState is the state a subagent reports to its parent with every
// event: without its event log, which the parent receives event by event,
// so that the signals stay small as the log grows.
func (a *agent) compactState() State {
	st := a.state()
	st.Events = []todo.Event{}
	return st
}
