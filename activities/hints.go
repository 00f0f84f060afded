package activities

import (
	"errors"
	"fmt"

	"github.com/todoflow/todoflow/api"
)

// What a tool says of its effects, and what RunTool does with it.
//
// A tool call that is interrupted after it may have reached its tool (a
// connection that broke mid-call, a worker that died, an attempt that
// timed out) may or may not have done its work. Running it again is right
// for a tool that changes nothing (read-only) or whose second call changes
// nothing more (idempotent), and wrong for the others: an order placed
// twice, a message sent twice. So RunTool runs a call of a tool that
// declares hints (HintedTool) again only when its hints allow it, or when
// the earlier attempt is known not to have reached the tool (Unsent); the
// model otherwise reads an error tool message saying that the call may or
// may not have taken effect (see uncertain). Tools that declare no hints
// are run again as before: their own Retryable is the tool's word.
//
// A run that asks for approval of destructive calls
// (RunToolInput.HoldDestructive) has the calls held of every tool that may
// destroy: those whose hints say so, and those that say nothing of
// themselves, which may, as MCP's defaults have it (holdHints). A tool
// that only reads says so (WithHints) to run unasked.

// ToolHints are what a tool says of its calls: MCP's tool annotations
// (readOnlyHint, destructiveHint, idempotentHint), with the MCP defaults
// filled in where a server says nothing (DefaultHints).
type ToolHints struct {
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
var DefaultHints = ToolHints{Destructive: true}

// MayDestroy reports whether a call may destroy or overwrite something.
func (h ToolHints) MayDestroy() bool { return !h.ReadOnly && h.Destructive }

// Resendable reports whether a call that may have reached the tool may be
// sent again: it changes nothing, or nothing more the second time.
func (h ToolHints) Resendable() bool { return h.ReadOnly || h.Idempotent }

// HintedTool is a Tool that says what its calls do. MCP tools are; wrap
// your own with WithHints.
type HintedTool interface {
	Tool
	Hints() ToolHints
}

// WithHints returns t declaring hints h.
func WithHints(t Tool, h ToolHints) HintedTool { return hinted{Tool: t, hints: h} }

type hinted struct {
	Tool
	hints ToolHints
}

func (t hinted) Hints() ToolHints { return t.hints }

// hintsOf returns the hints t declares, if it declares any.
func hintsOf(t Tool) (ToolHints, bool) {
	if h, ok := t.(HintedTool); ok {
		return h.Hints(), true
	}
	return ToolHints{}, false
}

// holdHints are the hints that decide whether a call of t is held for
// approval: its own, or DefaultHints (it may destroy) when it declares
// none, as an MCP tool without annotations has. A Go tool without hints
// once escaped "destructive" (issue 36).
func holdHints(t Tool) ToolHints {
	if h, ok := hintsOf(t); ok {
		return h
	}
	return DefaultHints
}

// Unsent marks err as a passing problem that kept the call from reaching
// its tool at all (a server that could not be started, a request that was
// never written): RunTool runs the call again whatever the tool's hints.
// Only a certainty deserves it: when the request may have been written,
// use Retryable, and the hints decide. Unsent(nil) is nil.
func Unsent(err error) error {
	if err == nil {
		return nil
	}
	return &retryableError{err: err, unsent: true}
}

// IsUnsent reports whether err was marked with Unsent.
func IsUnsent(err error) bool {
	r, ok := errors.AsType[*retryableError](err)
	return ok && r.unsent
}

// uncertain is the tool message of a call that was interrupted after it may
// have reached a tool that must not be sent the same call twice; why says
// what interrupted it.
func uncertain(tool, why string) RunToolResult {
	return RunToolResult{IsError: true, Content: fmt.Sprintf(
		"%s may or may not have taken effect: %s. It is not run again on its own, since the tool is not marked idempotent or read-only. "+
			"Check whether it took effect (with a tool that reads the state it changes, or by asking the user) before calling it again.",
		tool, why)}
}

// mayResend decides whether this attempt may run a call of a tool with
// hints h: yes for a first attempt and for a tool that may be sent a call
// twice; after an interrupted attempt only when that attempt (attempt-1)
// said, as its last heartbeat, that its call never reached the tool
// (last.Unsent). An attempt that ended any other way (the worker died, the
// attempt timed out, the connection broke after writing) may have acted.
func mayResend(h ToolHints, attempt int32, last *api.ToolProgress) bool {
	return attempt <= 1 || h.Resendable() || (last != nil && last.Unsent == attempt-1)
}
