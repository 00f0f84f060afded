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
	Plan             any              `json:"plan"`
	Extra            todo.Extra       `json:"extra"`
	Paused           bool             `json:"paused"`
	PauseReason      string           `json:"pause_reason"`
	AwaitingApproval bool             `json:"awaiting_approval"`
	Continuation     bool             `json:"continuation"`
	Events           []any            `json:"events"`
	Subagents        map[string]State `json:"subagents"`
}

func (a *agent) state() State {
	return State{
		AgentID:      a.cfg.agentID,
		Status:       a.status,
		Turns:        a.turns,
		ModelCalls:   a.modelCalls,
		Todos:        a.todo.List(),
		Extra:        a.todo.Extra(),
		Paused:       a.todo.Paused,
		PauseReason:  a.todo.PauseReason,
		Continuation: a.continuation,
		Events:       []any{},
		Subagents:    map[string]State{},
	}
}
