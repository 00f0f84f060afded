package tools

// Hints are what a tool says of its calls: MCP's tool annotations
// (readOnlyHint, destructiveHint, idempotentHint), with the MCP defaults
// filled in where a server says nothing (DefaultHints).
type Hints struct {
	// ReadOnly: the tool does not change its environment.
	ReadOnly bool
	// Destructive: the tool may destroy or overwrite (rather than only
	// add). Meaningful only when ReadOnly is false.
	Destructive bool
	// Idempotent: a second call with the same arguments changes nothing
	// more. Meaningful only when ReadOnly is false.
	Idempotent bool
}

// DefaultHints are MCP's defaults for a tool that gives no annotations: not
// read-only, destructive, not idempotent.
var DefaultHints = Hints{Destructive: true}

// MayDestroy reports whether a call may destroy or overwrite something.
func (h Hints) MayDestroy() bool { return !h.ReadOnly && h.Destructive }

// Resendable reports whether a call that may have reached the tool may be
// sent again: it changes nothing, or nothing more the second time.
func (h Hints) Resendable() bool { return h.ReadOnly || h.Idempotent }

// HintedTool is a Tool that says what its calls do. MCP tools are; wrap
// your own with WithHints.
type HintedTool interface {
	Tool
	Hints() Hints
}

// WithHints returns t declaring hints h.
func WithHints(t Tool, h Hints) HintedTool { return hinted{Tool: t, hints: h} }

type hinted struct {
	Tool
	hints Hints
}

func (t hinted) Hints() Hints { return t.hints }

// HintsOf returns the hints t declares, if it declares any.
func HintsOf(t Tool) (Hints, bool) {
	if h, ok := t.(HintedTool); ok {
		return h.Hints(), true
	}
	return Hints{}, false
}
