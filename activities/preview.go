package activities

import (
	"cmp"
	"context"
	"fmt"

	"github.com/todoflow/todoflow/activities/tools"
	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/internal/text"
	"github.com/todoflow/todoflow/todo"
)

// What a waiting call would change, before it runs.
//
// A call that waits for approval is answered by a human who should see
// what it would do: for a write, the diff it would make to the file. Only
// the worker that holds the workspace can read the file, so the workflow
// asks it, with PreviewTool, just before the wait, on the queue the call
// itself would run on. The preview reads and never writes: it runs the
// call's own checks and diff (a tools.Previewer), and its answer, bounded like a
// diff after a write (tools.MaxDiffBytes), goes to the user in the wait
// (state.pending_approval.diff), never to the model. It never holds the
// approval back: what keeps it from a diff (a write the tool would refuse,
// a tool that shows none, a workspace it cannot open) is its answer,
// CallDiff.Unavailable, and the activity fails only when asking again may
// help.

// PreviewToolName is the activity that works out the diff a waiting tool
// call would make.
const PreviewToolName = "PreviewTool"

// Previews reports whether the workflow asks for a preview of a waiting
// call of tool: the built-ins that write a file (write_file), each a
// tools.Previewer. Called by workflow code, so it decides on the name
// alone.
func Previews(tool string) bool { return tool == "write_file" }

// PreviewTool works out what the tool call in would change, without
// running it: found as RunTool finds it (the call read from the
// transcript, the run's tools, the worker's registry), in the same
// workspace. Whatever keeps it from a diff is said in the answer's
// Unavailable; it fails only when the call cannot be read.
func (a *Activities) PreviewTool(ctx context.Context, in RunToolInput) (api.CallDiff, error) {
	var err error
	if in.Call, err = a.readCall(ctx, in); err != nil {
		return api.CallDiff{}, err
	}
	if !todo.Allowed(in.WorkerTools, in.Call.Name) {
		return unavailable("tool %s is not allowed in this run", in.Call.Name), nil
	}
	tool, ok, err := a.registry().Find(ctx, in.Call.Name)
	switch {
	case err != nil:
		return unavailable("tool %s: %v", in.Call.Name, err), nil
	case !ok:
		return unavailable("this worker has no tool %s", in.Call.Name), nil
	}
	p, ok := tool.(tools.Previewer)
	if !ok {
		return unavailable("tool %s of this worker shows no diff before it runs", in.Call.Name), nil
	}
	in.WorkflowID = cmp.Or(in.WorkflowID, running(ctx).info.WorkflowExecution.ID)
	ws, err := a.workspace(in)
	if err != nil {
		return unavailable("%v", err), nil
	}
	defer ws.Close()
	env := tools.Env{WorkflowID: in.WorkflowID, AgentID: in.AgentID, Workspace: ws, OutputMax: a.toolOutputMax(), VCSWrites: a.VCSWrites}
	diff, err := safely(ctx, in.Call.Name, "preview", func() (api.CallDiff, error) {
		return p.Preview(ctx, env, in.Call.Arguments)
	})
	if err != nil {
		return unavailable("the call would fail: %v", err), nil
	}
	taken := diffTaker{diff: diff.Hunks}
	diff.Hunks = taken.bounded()
	diff.Unavailable = text.Cut(diff.Unavailable, api.MaxUnavailableBytes)
	return diff, nil
}

// unavailable is a preview's answer that says why it has no diff.
func unavailable(format string, args ...any) api.CallDiff {
	return api.CallDiff{Unavailable: text.Cut(fmt.Sprintf(format, args...), api.MaxUnavailableBytes)}
}
