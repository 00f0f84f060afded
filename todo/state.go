package todo

// State is an agent's todo state. It lives in workflow state, is carried
// through continue-as-new, and is shown under `extra` by the state query with
// cubepi's six keys, which are documented on the fields.
type State struct {
	// Todos is the current checklist (cubepi `todos`).
	Todos []Item `json:"todos"`
	// GuardRetries counts, per guard, how often it fired since the last user
	// message: "finalization" and "continuation" (cubepi `todo_guard_retries`).
	GuardRetries map[string]int `json:"todo_guard_retries"`
	// GuardBlocked is set while the finalization guard has given up and asked
	// the model for a plain explanation (cubepi `todo_guard_blocked`).
	GuardBlocked *GuardBlocked `json:"todo_guard_blocked"`
	// GuardSuppressed silences the guards after a blocked episode or a pause,
	// until the next user message (cubepi `todo_guard_suppressed`).
	GuardSuppressed bool `json:"todo_guard_suppressed"`
	// StaleIterations counts consecutive responses that used other tools but
	// not write_todos (cubepi `todo_stale_iterations`).
	StaleIterations int `json:"todo_stale_iterations"`
	// FinalizationCorrection is true from the moment a completion reminder
	// is injected until the turn ends, and null otherwise: cubepi
	// `todo_finalization_correction`, "whether a finalization correction was
	// injected this turn", which cubepi resets to None. It goes back to null
	// when EndOfTurn lets the turn end, when a todo_pause succeeds, at
	// TurnEnded and at NewUserMessage.
	FinalizationCorrection *bool `json:"todo_finalization_correction"`

	// Paused and PauseReason hold a successful todo_pause until the run is
	// resumed or a new user message arrives.
	Paused      bool   `json:"paused"`
	PauseReason string `json:"pause_reason"`
	// RefusedTool, LastRefused and Refusals track the same call being
	// refused again and again, so that its error can break the loop
	// (refusals.go): the tool, the canonical JSON of its arguments and how
	// many times in a row it was refused. A state carried from before
	// RefusedTool existed tracked write_todos only: an empty RefusedTool
	// with Refusals > 0 reads as write_todos.
	RefusedTool string `json:"refused_tool,omitempty"`
	LastRefused string `json:"last_refused,omitempty"`
	Refusals    int    `json:"refusals,omitempty"`
	// ContinuationDigest is the digest of the list (ListDigest) when the
	// last continuation prompt was sent, to word the next one more firmly
	// if nothing changed: a digest, not a copy, since the state is in
	// every carry and the list may take 200 KB.
	ContinuationDigest string `json:"continuation_digest,omitempty"`
}

// GuardBlocked is the escalation payload of the finalization guard.
type GuardBlocked struct {
	Reason     string `json:"reason"`
	Unfinished []Item `json:"unfinished"`
}

// Extra is the `extra` object of the state query: cubepi's keys, nothing more.
type Extra struct {
	Todos                  []Item         `json:"todos"`
	GuardRetries           map[string]int `json:"todo_guard_retries"`
	GuardBlocked           *GuardBlocked  `json:"todo_guard_blocked"`
	GuardSuppressed        bool           `json:"todo_guard_suppressed"`
	StaleIterations        int            `json:"todo_stale_iterations"`
	FinalizationCorrection *bool          `json:"todo_finalization_correction"`
}

// Extra returns the cubepi view of s, with empty collections rather than
// nulls so that clients need no special cases.
func (s *State) Extra() Extra {
	retries := s.GuardRetries
	if retries == nil {
		retries = map[string]int{}
	}
	return Extra{
		Todos:                  s.List(),
		GuardRetries:           retries,
		GuardBlocked:           s.GuardBlocked,
		GuardSuppressed:        s.GuardSuppressed,
		StaleIterations:        s.StaleIterations,
		FinalizationCorrection: s.FinalizationCorrection,
	}
}

// List returns the checklist, never nil.
func (s *State) List() []Item {
	if s.Todos == nil {
		return []Item{}
	}
	return s.Todos
}
