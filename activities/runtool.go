package activities

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/todoflow/todoflow/activities/tools"
	"github.com/todoflow/todoflow/internal/text"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
	"github.com/todoflow/todoflow/transcript"
)

// Error types of the application errors RunTool fails with, for retry
// policies (NonRetryableErrorTypes) and for callers that inspect them.
const (
	// ErrTypeToolRetryable is a tool's passing problem, marked with tools.Retryable.
	ErrTypeToolRetryable = "ToolRetryable"
	// ErrTypeWorkspace is a workspace that cannot be found or created.
	ErrTypeWorkspace = "ToolWorkspace"
)

// Bounds of a tool's output, which the model reads in the tool message: the
// transcript is sent on every model call and the result is stored in
// workflow history (Temporal refuses a payload over 2 MiB), so one large
// listing or log must not flood either.
const (
	// DefaultToolOutputMax is the limit of a worker that sets none.
	DefaultToolOutputMax = 64 << 10
	// MinToolOutputMax and MaxToolOutputMax bound what a worker may set.
	MinToolOutputMax = 1 << 10
	MaxToolOutputMax = 1 << 20
)

// RunToolInput is one tool call of an agent.
type RunToolInput struct {
	// WorkflowID is the workflow whose workspace the call works in: its
	// session's root. Empty means the workflow that scheduled the activity.
	WorkflowID string
	// Session is the key of the session (SessionKey), which names the
	// default workspace; empty in a call of a build from before session
	// keys, whose folder was named after WorkflowID.
	Session string `json:",omitempty"`
	AgentID string
	// Workspace is the folder the tools work in; relative to the worker's
	// current directory if relative. Empty means a folder for the workflow
	// under the worker's state folder.
	Workspace string
	Call      model.ToolCall
	// From, when set, says where the call stands in the calling workflow's
	// transcript; the activity reads its arguments from there (Call then
	// carries only the id and name), so that large ones enter history
	// once, in the model's answer, not again in the tool's input.
	From *transcript.CallRef `json:",omitempty"`
	// WorkerTools is the run's `tools`: the names and patterns of the
	// worker's tools it may call. Nil means every tool, empty none (the
	// model is offered only these, but may still call another by name).
	WorkerTools []string `json:"worker_tools"`
	// Host is the host queue of the worker that holds the workspace, for
	// RunToolOnHost, which runs the call only on that worker.
	Host string `json:",omitempty"`
	// HoldDestructive asks for the call to be held, not run, when its
	// tool may destroy or overwrite (tools.Hints.MayDestroy of its hints, or
	// of MCP's defaults for a tool that declares none):
	// the run wants such calls approved first (the input's approval value
	// "destructive"), and only the worker knows the tools' hints.
	HoldDestructive bool `json:"hold_destructive,omitempty"`
}

// RunToolResult is what the model reads in the tool message.
type RunToolResult struct {
	Content string
	// IsError is set when the call failed (unknown tool, bad arguments, a
	// tool error); Content says why.
	IsError bool
	// Held is set when the call was not run because it may destroy and the
	// input asked to hold such calls (HoldDestructive); Content says why.
	// The workflow asks for approval and sends the call again without
	// HoldDestructive, or answers the model with the refusal.
	Held bool `json:",omitempty"`
	// Diff is what the call changed, for the user, never the model: the
	// hunks of a unified diff (write_file's; tools.Env.ShowDiff), at most
	// tools.MaxDiffBytes. Empty when the tool shows none or the call failed.
	Diff string `json:",omitempty"`
}

// RunTool runs one tool call with the worker's registry
// (tools.DefaultRegistry if a.Tools is nil).
//
// Whatever goes wrong with the call itself (an unknown tool, one the run
// does not allow, malformed arguments, a tool error, even a panic), the
// activity succeeds with an error result, so that the model can read what
// happened and carry on. It fails only when running it again can help (a
// tools.Retryable error, a source that cannot list its tools, cancellation
// or a timeout), or when the worker cannot provide the workspace, which the
// model cannot fix either (ErrTypeWorkspace, not retryable). resend.go says
// when an interrupted call runs again and when a call is held; toolbeat.go,
// how the activity heartbeats while the tool runs; metrics.go, how calls
// are counted.
func (a *Activities) RunTool(ctx context.Context, in RunToolInput) (res RunToolResult, err error) {
	// What the call came to, for the metric: the tool's name once the
	// worker knows it, and the outcome of an answer without error.
	label, outcome := "", OutcomeOK
	defer func() {
		countToolCall(ctx, in.Call.Name, label, outcome, err)
		if err == nil && !res.Held && a.Transcripts != nil {
			// The next model call finds the result here when the
			// workflow leaves it out of its input (NewMessages).
			a.Transcripts.Remember(callerRun(ctx), res.Content)
		}
	}()

	// From here on the call may wait: reading the call from the run's
	// history, finding the tool (which may start an MCP server), and the
	// tool itself.
	beat := beatTool(ctx, in.Call.Name)
	defer beat.stop()
	// An attempt that fails before its call may have reached the tool
	// says so to the next one (resend.go); reached is set just before the
	// tool runs, and cleared when it answers Unsent.
	reached := false
	defer func() {
		if err != nil && !reached {
			beat.unsent(attempt(ctx))
		}
	}()

	reg := a.registry()
	allow := in.WorkerTools
	if in.Call, err = a.readCall(ctx, in); err != nil {
		return RunToolResult{}, err
	}
	if !todo.Allowed(allow, in.Call.Name) {
		if _, ok := reg.Lookup(in.Call.Name); ok {
			label = in.Call.Name
		}
		outcome = OutcomeRefused
		may := "none of the worker's tools"
		if len(allow) > 0 {
			may = strings.Join(allow, ", ")
		}
		return RunToolResult{
			Content: fmt.Sprintf("tool %q is not allowed in this run; it may use %s", in.Call.Name, may),
			IsError: true,
		}, nil
	}

	tool, ok, err := reg.Find(ctx, in.Call.Name)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return RunToolResult{}, ctxErr
		}
		// A source that cannot say (a server that is down) may be back
		// at the next attempt; after the last one the workflow answers
		// the model with this error.
		return RunToolResult{}, temporal.NewApplicationErrorWithCause(
			fmt.Sprintf("tool %s: %v", in.Call.Name, err), ErrTypeToolRetryable, err)
	}
	if !ok {
		outcome = OutcomeUnknown
		var names []string
		specs, _ := reg.Specs(ctx, allow) // a source that is down lists nothing
		for _, s := range specs {
			names = append(names, s.Name)
		}
		return RunToolResult{
			Content: fmt.Sprintf("unknown tool %q; the tools run by the worker are: %s", in.Call.Name, strings.Join(names, ", ")),
			IsError: true,
		}, nil
	}
	label = in.Call.Name
	hints, hinted := tools.HintsOf(tool)
	if in.HoldDestructive && holdHints(tool).MayDestroy() {
		outcome = OutcomeHeld
		return RunToolResult{Held: true, Content: fmt.Sprintf("%s may destroy or overwrite (it does not say it is read-only or only adds), and this run asks for approval of such calls", in.Call.Name)}, nil
	}
	if hinted && !mayResend(hints, attempt(ctx), lastBeat(ctx)) {
		outcome = OutcomeUncertain
		return uncertain(in.Call.Name, "an earlier attempt of this call was interrupted (its worker stopped, or it timed out) after the call may have reached the tool"), nil
	}

	in.WorkflowID = cmp.Or(in.WorkflowID, running(ctx).info.WorkflowExecution.ID)
	// Opened (and created) now, once for the whole call: a worker that
	// cannot gets a clear activity failure rather than the model an error
	// it cannot act on, and the tool works in the folder that was checked,
	// whatever happens to its path meanwhile.
	ws, err := a.workspace(in)
	if err != nil {
		return RunToolResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeWorkspace, err)
	}
	defer ws.Close()

	limit := a.toolOutputMax()
	var diff diffTaker
	env := tools.Env{WorkflowID: in.WorkflowID, AgentID: in.AgentID, Workspace: ws, OutputMax: limit, VCSWrites: a.VCSWrites,
		Progress: beat.progress, ShowDiff: diff.show}
	reached = true
	content, err := safely(ctx, in.Call.Name, "tool", func() (string, error) {
		return tool.Run(ctx, env, in.Call.Arguments)
	})
	if err == nil {
		return RunToolResult{Content: truncateOutput(in.Call.Name, content, limit), Diff: diff.bounded()}, nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		// Cancelled or timed out: the tool did not fail, the attempt did;
		// Temporal decides whether to run it again.
		return RunToolResult{}, ctxErr
	}
	if tools.IsRetryable(err) {
		switch {
		case tools.IsUnsent(err):
			reached = false
		case hinted && !hints.Resendable():
			outcome = OutcomeUncertain
			res := uncertain(in.Call.Name, err.Error())
			res.Content = truncateOutput(in.Call.Name, res.Content, limit)
			return res, nil
		}
		return RunToolResult{}, temporal.NewApplicationErrorWithCause(
			fmt.Sprintf("tool %s: %v", in.Call.Name, err), ErrTypeToolRetryable, err)
	}
	outcome = OutcomeError
	return RunToolResult{Content: truncateOutput(in.Call.Name, err.Error(), limit), IsError: true}, nil
}

// toolOutputMax is the limit RunTool applies to a tool's output.
func (a *Activities) toolOutputMax() int {
	switch {
	case a.ToolOutputMax <= 0:
		return DefaultToolOutputMax
	case a.ToolOutputMax < MinToolOutputMax:
		return MinToolOutputMax // room for a useful answer and read_file's note
	}
	return a.ToolOutputMax
}

// truncateOutput keeps the first limit bytes of a tool's output, cut where a
// character begins, and adds a line that says how much was cut and how to
// see the rest. Tools that can page (read_file, list_files) fit their answer
// to the limit themselves and say how to go on in their own words.
func truncateOutput(tool, out string, limit int) string {
	if len(out) <= limit {
		return out
	}
	kept := text.CutIndex(out, limit)
	return out[:kept] + fmt.Sprintf("\n[%s: output truncated: the first %d of %d bytes are shown, %d bytes were cut (the worker keeps at most %d). "+
		"To see the rest, call %s again asking for less, e.g. a narrower path, a smaller range or a filter.]",
		tool, kept, len(out), len(out)-kept, limit, tool)
}

// safely runs a tool's run or preview (what), turning a panic into an
// error: a tool that panics on some arguments would panic again on every
// retry, so the model (or, for a preview, the user) is told instead, and
// the stack goes to the worker's log.
func safely[T any](ctx context.Context, tool, what string, f func() (T, error)) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			activity.GetLogger(ctx).Error("Tool panicked", "Tool", tool, "What", what, "Panic", r, "Stack", string(debug.Stack()))
			err = fmt.Errorf("%s: the %s failed unexpectedly (panic: %v)", tool, what, r)
		}
	}()
	return f()
}

// registry is the worker's tools, tools.DefaultRegistry when it names none.
func (a *Activities) registry() *tools.Registry {
	if a.Tools == nil {
		return defaultRegistry()
	}
	return a.Tools
}

// defaultRegistry is shared by every Activities without Tools, so that it is
// built once per process.
var defaultRegistry = sync.OnceValue(tools.DefaultRegistry)

// workspace opens the workspace of a call: the input's folder, which must
// be inside one of the worker's tools.Roots (checked at the run's start by
// CheckWorkspace, and again here, since this worker may not be the one that
// checked, and the folder may have changed since), or else the session's
// folder, <StateDir>/sessions/<session key> (session.go). The caller
// closes it.
func (a *Activities) workspace(in RunToolInput) (tools.Workspace, error) {
	if in.Workspace != "" {
		if err := a.stateApart(in.Workspace); err != nil {
			return tools.Workspace{}, err
		}
		ws, err := a.Roots.Open(in.Workspace)
		if err != nil {
			return tools.Workspace{}, fmt.Errorf("workspace %w", err)
		}
		return ws, nil
	}
	if a.StateDir == "" {
		return tools.Workspace{}, errors.New("no workspace: the call names none and the worker has no state folder")
	}
	if in.WorkflowID == "" {
		return tools.Workspace{}, errors.New("no workspace: the call names none and has no workflow id")
	}
	name, err := sessionFolder(in.Session, legacyFolder(in.WorkflowID))
	if err != nil {
		return tools.Workspace{}, fmt.Errorf("no workspace: %w", err)
	}
	return tools.OpenWorkspace(filepath.Join(a.StateDir, SessionsFolder, name))
}

// readCall is the call in names: in.Call, or, when in.From is set, the call
// read from the transcript of the workflow that scheduled this activity,
// checked to be the call the workflow meant.
func (a *Activities) readCall(ctx context.Context, in RunToolInput) (model.ToolCall, error) {
	if in.From == nil {
		return in.Call, nil
	}
	if a.Transcripts == nil || callerRun(ctx).WorkflowID == "" {
		return model.ToolCall{}, temporal.NewNonRetryableApplicationError("a tool call by reference needs an activity context and a transcript reader", transcript.ErrTypeMismatch, nil)
	}
	return a.Transcripts.Call(ctx, callerRun(ctx), *in.From, in.Call.ID)
}

// callerRun is the run that scheduled the activity.
func callerRun(ctx context.Context) transcript.Run {
	info := running(ctx).info
	return transcript.Run{Namespace: info.WorkflowNamespace, WorkflowID: info.WorkflowExecution.ID, RunID: info.WorkflowExecution.RunID}
}
