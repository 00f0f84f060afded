package api

// The activities a client reads progress from in a session's pending
// activities: a model call's heartbeat carries a preview of its reply
// (ReplyStream; the reply itself streams from its worker, whose identity
// the pending activity shows), a tool call's its tool's name and progress
// (ToolProgress). Named here, so that a client needs the contract and not the
// worker's internals.
const (
	ModelCallActivity  = "CallModel"
	ToolActivity       = "RunTool"
	ToolOnHostActivity = "RunToolOnHost"
)

// ReplyStream is the heartbeat detail of a running CallModel.
type ReplyStream struct {
	AgentID string `json:"agent_id"`
	Turn    int    `json:"turn"`
	Call    int    `json:"call"`
	// Text is the reply's text so far (its end, when it grew past
	// activities.MaxStreamBytes).
	Text string `json:"text"`
	// Cut counts the bytes of the reply left out before Text.
	Cut int `json:"cut,omitempty"`
}

// ToolProgress is the heartbeat detail of a running RunTool.
type ToolProgress struct {
	Tool string `json:"tool"`
	// Progress, Total and Message are the tool's latest word on how far it
	// has come: Progress grows, Total is 0 when unknown, Message is at
	// most activities.MaxProgressMessage bytes.
	Progress float64 `json:"progress,omitempty"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
	// Unsent is the number of the attempt that failed before its call
	// reached the tool; 0 while none did.
	Unsent int32 `json:"unsent,omitempty"`
}
