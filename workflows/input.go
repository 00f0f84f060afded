package workflows

import (
	"time"

	"github.com/todoflow/todoflow/api"

	"github.com/todoflow/todoflow/todo"
)

// Carry is the state a run hands to its continuation: one part per
// component of the run, each made by the component's carry method and read
// back by its constructor, so that a component's state crosses with it and
// fit.go can shed it part by part.
type Carry struct {
	// Protocol is the protocol of the build that wrote the carry.
	Protocol int             `json:"protocol,omitempty"`
	Session  SessionCarry    `json:"session"`
	Window   WindowCarry     `json:"window"` // window.go
	Todo     todo.State      `json:"todo"`
	Plans    *todo.PlanState `json:"plans,omitempty"`
	// Inbox is the queue of messages waiting for their turn, the turn
	// handed over where it stood first, and the kept replies (replies.go).
	Inbox     InboxCarry     `json:"inbox"`
	Approvals ApprovalsCarry `json:"approvals"`      // approvals.go
	Tree      *TreeCarry     `json:"tree,omitempty"` // tree.go
	// Published are the search attributes the run last sent, which the
	// continuation inherits.
	Published *PublishedAttrs `json:"published,omitempty"`
	// Reports are the reporters' queues and counts, in the order of
	// AgentInput.Reporters: a reporter that is failing does not hold the
	// handover (reporters.go).
	Reports []CarriedReporter `json:"reports,omitempty"`
	// Diffs are the latest tool calls' diffs whose results the window
	// carries, for a client that attaches to the continuation (diffs.go).
	Diffs []CarriedDiff `json:"diffs,omitempty"`
}

// SessionCarry is the loop's own part of a carry: its counters, the
// settings the user changed, and how the last turn ended.
type SessionCarry struct {
	Turns        int  `json:"turns"`
	ModelCalls   int  `json:"model_calls"`
	Continuation bool `json:"continuation"`
	Ended        bool `json:"ended,omitempty"`
	// FailedTurn: the last turn ended on a model error; ModelError says which.
	FailedTurn bool            `json:"failed_turn,omitempty"`
	ModelError *api.ModelError `json:"model_error,omitempty"`
	Usage      api.Usage       `json:"usage"`
	// Served is the model the worker last answered with (state.model when
	// the input names none), until the continuation's first call.
	Served string `json:"served,omitempty"`
}

// RunningChild is a running subagent handed to a continuation: its end
// reaches the continuation as its tree_end, or, if it dies without one, as
// its deadline (when the server ends it) passing.
type RunningChild struct {
	AgentID    string    `json:"agent_id"`
	WorkflowID string    `json:"workflow_id"`
	Deadline   time.Time `json:"deadline"`
}

// PublishedAttrs are the search attributes a run sent last, as the run
// decided them (TodoCurrent unredacted, see Options.Encrypted).
type PublishedAttrs struct {
	Total     int64  `json:"total"`
	Completed int64  `json:"completed"`
	Current   string `json:"current"`
	Status    string `json:"status"`
}

// Inbound is a user message waiting for its turn.
type Inbound struct {
	Text string `json:"text"`
	// Seq identifies a send_message update waiting for its reply in this
	// run; 0 for signals, the prompt, and a turn whose update was
	// answered that it goes on in a later run.
	Seq int `json:"seq,omitempty"`
	// ReplyTo is the id of the update that started the turn: a turn
	// handed over keeps its reply under it for turn_reply (replies.go).
	ReplyTo string `json:"reply_to,omitempty"`
	// Retry runs the failed last turn again instead of a new message.
	Retry bool `json:"retry,omitempty"`
	// Blocked is a turn handed over in its wait on blocked plan steps,
	// which the continuation takes up first.
	Blocked *BlockedTurn `json:"blocked,omitempty"`
}

// config is the run's input, its settings (the input with its defaults
// applied and checked), and what the run adds at its start.
type config struct {
	api.Settings
	in api.AgentInput
	// carry is in's carry, read (readCarry); nil on a session's first run.
	carry *Carry
	// session is the session's key (sessionKey), set at the run's start.
	session string
}

// resolve checks the input and applies defaults (api.AgentInput.Settings).
func resolve(in api.AgentInput) (config, error) {
	s, err := in.Settings()
	if err != nil {
		return config{}, err
	}
	return config{Settings: s, in: in}, nil
}
