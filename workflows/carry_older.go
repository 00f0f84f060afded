package workflows

import (
	"encoding/json"

	"github.com/todoflow/todoflow/api"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// Carries of protocols before 2 are flat: every component's state is a
// field of the carry itself. A continuation is a new run, with no older
// history to replay, so such a carry is served: it is read here into the
// parts of today's carry, with what it holds that this build does not know
// ignored (protocol.go).

// flatCarry is a carry as protocols 0 and 1 wrote it.
type flatCarry struct {
	Protocol        int                  `json:"protocol"`
	Messages        []model.Message      `json:"messages"`
	Todo            todo.State           `json:"todo"`
	Turns           int                  `json:"turns"`
	ModelCalls      int                  `json:"model_calls"`
	SummaryCalls    int                  `json:"summary_calls"`
	ContextLimit    int                  `json:"context_limit"`
	Continuation    bool                 `json:"continuation"`
	Inbox           []Inbound            `json:"inbox"`
	Ended           bool                 `json:"ended"`
	Plans           *todo.PlanState      `json:"plans"`
	Subagents       map[string]api.State `json:"subagents"`
	SubagentsPruned int                  `json:"subagents_pruned"`
	Running         []RunningChild       `json:"running"`
	FailedTurn      bool                 `json:"failed_turn"`
	ModelError      *api.ModelError      `json:"model_error"`
	Usage           api.Usage            `json:"usage"`
	EventsPruned    int                  `json:"events_pruned"`
	Tree            *TreeCarry           `json:"tree"`
	Remembered      []string             `json:"remembered"`
	Replies         []KeptReply          `json:"replies"`
	Published       *PublishedAttrs      `json:"published"`
	Reports         []CarriedReporter    `json:"reports"`
}

// UnmarshalJSON reads a carry of any protocol: today's parts as they are, a
// flat one into them.
func (c *Carry) UnmarshalJSON(b []byte) error {
	// Told apart by their shape, not by the protocol they claim: a part
	// is always written, and a carry that claims a protocol this build
	// does not speak is refused after it is read (refuseForeign).
	var probe struct {
		Session json.RawMessage `json:"session"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return err
	}
	if probe.Session != nil {
		type plain Carry
		return json.Unmarshal(b, (*plain)(c))
	}
	var f flatCarry
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*c = f.parts()
	return nil
}

// parts is the flat carry as today's parts.
func (f flatCarry) parts() Carry {
	tree := f.Tree
	if tree == nil && (len(f.Running) > 0 || len(f.Subagents) > 0 || f.SubagentsPruned > 0) {
		tree = &TreeCarry{}
	}
	if tree != nil {
		tree.Running, tree.Subagents, tree.SubagentsPruned = f.Running, f.Subagents, f.SubagentsPruned
	}
	if f.Plans != nil {
		f.Plans.Pruned += f.EventsPruned
	}
	return Carry{
		Protocol: f.Protocol,
		Session: SessionCarry{Turns: f.Turns, ModelCalls: f.ModelCalls, Continuation: f.Continuation, Ended: f.Ended,
			FailedTurn: f.FailedTurn, ModelError: f.ModelError, Usage: f.Usage},
		Window:    WindowCarry{Messages: f.Messages, SummaryCalls: f.SummaryCalls, ContextLimit: f.ContextLimit},
		Todo:      f.Todo,
		Plans:     f.Plans,
		Inbox:     InboxCarry{Queue: f.Inbox, Replies: f.Replies},
		Approvals: ApprovalsCarry{Remembered: f.Remembered},
		Tree:      tree,
		Published: f.Published,
		Reports:   f.Reports,
	}
}
