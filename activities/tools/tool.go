package tools

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/todoflow/todoflow/model"
)

// Tool is something a model may call that runs on the worker, as part of the
// RunTool activity (package activities).
//
// Run receives the arguments exactly as the model sent them (DecodeArgs checks
// them against the spec) and returns the text the model reads. An error is
// shown to the model as an error tool message and the run goes on; wrap an
// error with Retryable to ask Temporal to run the activity again instead
// (or with Unsent when the call certainly did not reach what it calls). A
// tool that declares hints (HintedTool) is run again only as they allow
// (Hints).
type Tool interface {
	Spec() model.ToolSpec
	Run(ctx context.Context, env Env, args json.RawMessage) (string, error)
}

// Env is what a tool knows about the call it serves.
type Env struct {
	// WorkflowID is the id of the calling agent's workflow; a subagent's id
	// is "<parent workflow id>/<agent id>".
	WorkflowID string
	// AgentID names the calling agent within its tree of agents.
	AgentID string
	// Workspace is the folder the tool may read and write.
	Workspace Workspace
	// VCSWrites: the operator lets tools write inside version control
	// metadata (activities.Activities.VCSWrites).
	VCSWrites bool

	// OutputMax is how many bytes of the tool's result the model reads:
	// RunTool cuts the rest. A tool that can page its answer
	// sizes it to fit, as read_file does. 0: no limit is known.
	OutputMax int

	// Progress, when not nil, takes what a running tool says of how far it
	// has come; RunTool puts the latest in its heartbeat, where a client
	// watching the session sees it (ToolProgress). Safe to call from any
	// goroutine, as often as the tool likes: the heartbeat carries the
	// latest at its own cadence.
	Progress func(Progress)

	// ShowDiff, when not nil, takes a diff of what the call changed, for
	// the user and never the model (write_file hands one): the lines of a
	// unified diff's hunks, as package internal/linediff writes them.
	// RunTool returns the last one beside the result (activities.RunToolResult.Diff),
	// cut to MaxDiffBytes. Safe to call from any goroutine.
	ShowDiff func(diff string)
}

// Func is the function of a tool made with New.
type Func func(ctx context.Context, env Env, args json.RawMessage) (string, error)

// New returns a Tool that describes itself with spec and runs fn.
func New(spec model.ToolSpec, fn Func) Tool {
	return funcTool{spec: spec, fn: fn}
}

type funcTool struct {
	spec model.ToolSpec
	fn   Func
}

func (t funcTool) Spec() model.ToolSpec { return t.spec }

func (t funcTool) Run(ctx context.Context, env Env, args json.RawMessage) (string, error) {
	return t.fn(ctx, env, args)
}

// Retryable marks err as a passing problem (a network blip, a busy service):
// RunTool then fails with a retryable error, so that Temporal runs the tool
// again under the activity's retry policy, instead of showing the error to
// the model. Retryable(nil) is nil.
func Retryable(err error) error {
	if err == nil {
		return nil
	}
	return &retryableError{err: err}
}

// IsRetryable reports whether err was marked with Retryable (it or an error
// it wraps).
func IsRetryable(err error) bool {
	_, ok := errors.AsType[*retryableError](err)
	return ok
}

type retryableError struct {
	err    error
	unsent bool // see Unsent
}

func (e *retryableError) Error() string { return e.err.Error() }
func (e *retryableError) Unwrap() error { return e.err }

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

// Progress is what a tool says of how far it has come (MCP's
// notifications/progress): Progress grows with each report; Total is 0
// when unknown.
type Progress struct {
	Progress float64
	Total    float64
	Message  string
}

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
