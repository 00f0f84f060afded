package api

import "encoding/json"

// ToolApprovalArgs is the argument of the approve_tool update.
type ToolApprovalArgs struct {
	Approved *bool  `json:"approved"`
	Feedback string `json:"feedback"`
	// CallID names the call answered; empty answers the one waiting.
	CallID string `json:"call_id,omitempty"`
	// Remember approves every later call of the same tool in this session.
	Remember bool `json:"remember,omitempty"`
	// AgentID picks the agent of the tree whose call is answered.
	AgentID string `json:"agent_id,omitempty"`

	unknown string // strict.go
}

// ApprovalArgs is the argument of the approve_plan update.
type ApprovalArgs struct {
	Approved *bool  `json:"approved"`
	Feedback string `json:"feedback"`
	// AgentID picks the agent of the tree whose plan is answered, when
	// several wait (the root hands the answer on).
	AgentID string `json:"agent_id,omitempty"`

	unknown string // strict.go
}

// ContinuationArgs is the argument of the set_continuation update.
type ContinuationArgs struct {
	Enabled *bool `json:"enabled"`

	unknown string // strict.go
}

// ResumeArgs is the resume signal's argument: a JSON string (the text the
// agent goes on with; empty for a default), or {"text", "agent_id"} to pick
// the paused agent of the tree when several are.
type ResumeArgs struct {
	Text    string `json:"text"`
	AgentID string `json:"agent_id,omitempty"`

	unknown string // strict.go
}

// UnmarshalJSON takes the plain string of older clients as the text, and
// keeps an unknown field of the object form for onResume to refuse.
func (r *ResumeArgs) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &r.Text); err == nil {
		return nil
	}
	type plain ResumeArgs
	unknown, err := strictly(b, (*plain)(r))
	r.unknown = unknown
	return err
}

// ErrTypeTurnGoesOn is the type of the failure a send_message, retry_turn
// or turn_reply is answered with when its turn was handed over to the
// session's next run: the reply comes from turn_reply (TurnReplyArgs).
const ErrTypeTurnGoesOn = "TurnGoesOn"

// TurnGoesOn is the detail of a TurnGoesOn failure.
type TurnGoesOn struct {
	// UpdateID is what turn_reply asks for: the id of the update that
	// started the turn.
	UpdateID string `json:"update_id"`
}

// TurnReplyArgs is the argument of the turn_reply update.
type TurnReplyArgs struct {
	UpdateID string `json:"update_id"`

	unknown string // strict.go
}

// UnmarshalJSON decodes turn_reply's arguments, keeping an unknown field for
// the validator.
func (r *TurnReplyArgs) UnmarshalJSON(b []byte) error {
	type plain TurnReplyArgs
	unknown, err := strictly(b, (*plain)(r))
	r.unknown = unknown
	return err
}
