package activities

import (
	"fmt"

	"github.com/todoflow/todoflow/activities/tools"
	"github.com/todoflow/todoflow/api"
)

// What RunTool does with what a tool says of its effects.
//
// A tool call that is interrupted after it may have reached its tool (a
// connection that broke mid-call, a worker that died, an attempt that
// timed out) may or may not have done its work. Running it again is right
// for a tool that changes nothing (read-only) or whose second call changes
// nothing more (idempotent), and wrong for the others: an order placed
// twice, a message sent twice. So RunTool runs a call of a tool that
// declares hints (tools.HintedTool) again only when its hints allow it, or
// when the earlier attempt is known not to have reached the tool
// (tools.Unsent); the model otherwise reads an error tool message saying
// that the call may or may not have taken effect (see uncertain). Tools that
// declare no hints are run again as their own tools.Retryable says.
//
// A run that asks for approval of destructive calls
// (RunToolInput.HoldDestructive) has the calls held of every tool that may
// destroy: those whose hints say so, and those that say nothing of
// themselves, which may, as MCP's defaults have it (holdHints). A tool
// that only reads says so (tools.WithHints) to run unasked.

// holdHints are the hints that decide whether a call of t is held for
// approval: its own, or tools.DefaultHints (it may destroy) when it declares
// none, as an MCP tool without annotations has. A Go tool without hints
// once escaped "destructive" (issue 36).
func holdHints(t tools.Tool) tools.Hints {
	if h, ok := tools.HintsOf(t); ok {
		return h
	}
	return tools.DefaultHints
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
func mayResend(h tools.Hints, attempt int32, last *api.ToolProgress) bool {
	return attempt <= 1 || h.Resendable() || (last != nil && last.Unsent == attempt-1)
}
