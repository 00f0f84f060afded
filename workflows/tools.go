package workflows

// The tool calls of a model's answer: the workflow's own tools applied
// here, the worker's run as activities on the workspace's host.

import (
	"fmt"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
	"github.com/todoflow/todoflow/transcript"
)

// runTools answers every tool call of one response, in call order: the todo
// tools inside the workflow, the others as concurrent activities. Calls
// past todo.MaxToolCallsPerResponse are answered, not run: more would pass
// the activities the server lets a run have pending.
func (a *agent) runTools(ctx workflow.Context, calls []model.ToolCall) {
	if n := len(calls); n > todo.MaxToolCallsPerResponse {
		a.runSomeTools(ctx, calls[:todo.MaxToolCallsPerResponse])
		if a.cur.at.Tools {
			return // none ran; the continuation answers them all
		}
		for _, c := range calls[todo.MaxToolCallsPerResponse:] {
			a.append(model.Message{Role: model.RoleTool, ToolCallID: c.ID, IsError: true, Content: todo.TooManyToolCalls(n)})
		}
		return
	}
	a.runSomeTools(ctx, calls)
}

// runSomeTools answers the tool calls that run of one response.
func (a *agent) runSomeTools(ctx workflow.Context, calls []model.ToolCall) {
	results := make([]*todo.Result, len(calls))
	if len(a.cfg.Approval) > 0 {
		// Calls that need approval wait for it before any call of the
		// response runs; the refused ones are left out of the rest.
		var handed bool
		if results, handed = a.approveTools(ctx, calls); handed {
			a.cur.at.Tools = true
			return
		}
	}
	var tcalls []todo.Call
	var at []int
	for i, c := range calls {
		if results[i] == nil {
			tcalls = append(tcalls, todo.Call{ID: c.ID, Name: c.Name, Args: c.Arguments})
			at = append(at, i)
		}
	}
	for j, r := range todo.Apply(&a.todo, tcalls, a.cfg.Todo) {
		results[at[j]] = r
	}
	futures := make([]workflow.Future, len(calls))
	// The tool activities run on the host of the workspace (host.go).
	var queue string
	var hostErr error
	for i, c := range calls {
		if results[i] == nil && !a.inWorkflow(c.Name) {
			queue, hostErr = a.host.toolQueue(ctx)
			break
		}
	}
	direct := queue != "" && a.host.direct
	tools := make([]toolCall, len(calls))
	for i, c := range calls {
		if results[i] != nil || a.inWorkflow(c.Name) {
			continue
		}
		if hostErr != nil {
			results[i] = &todo.Result{IsError: true, Content: fmt.Sprintf("Tool %s was not run: %v", c.Name, hostErr)}
			continue
		}
		tools[i] = toolCall{c: c, from: a.callRef(i, c), workspaceOf: a.tree.rootID, queue: queue, direct: direct}
		futures[i] = a.runTool(ctx, tools[i])
	}
	for i, c := range calls {
		msg := model.Message{Role: model.RoleTool, ToolCallID: c.ID}
		switch r := results[i]; {
		case r != nil:
			msg.Content, msg.IsError = r.Content, r.IsError
		case a.inWorkflow(c.Name): // a plan or agent tool: todo.Apply ran the list's
			r := a.workflowTool(ctx, c)
			msg.Content, msg.IsError = r.Content, r.IsError
		default:
			var out activities.RunToolResult
			err := futures[i].Get(ctx, &out)
			if direct && notRun(err) {
				// Refused by a worker that is not the host, or taken by
				// none: nothing ran. The host's queue takes it, and this
				// run's later calls.
				a.host.direct = false
				again := tools[i]
				again.direct = false
				err = a.runTool(ctx, again).Get(ctx, &out)
			}
			if err == nil && out.Held {
				var handed bool
				if out, handed, err = a.heldTool(ctx, tools[i]); handed {
					// Its wait was handed over: the continuation asks
					// again, and answers it (answerHeld).
					a.cur.at.Held = append(a.cur.at.Held, c.ID)
					continue
				}
			}
			msg.Content, msg.IsError = a.activityAnswer(ctx, c, queue, out, err)
		}
		a.appendAnswer(c, msg)
	}
}

// sessionKey is the key of the session a run belongs to (activities'
// session.go): a root makes it of its workflow id and first run id, which
// continue-as-new keeps; a subagent has its parent's in its input (none
// from a parent of a build before keys).
func sessionKey(info *workflow.Info, in api.AgentInput) string {
	if info.ParentWorkflowExecution != nil {
		return in.Session
	}
	return activities.SessionKey(info.WorkflowExecution.ID, info.FirstRunID)
}

// activityAnswer is what the tool message of call c says of its activity's
// outcome (out, or err; queue is the host's, "" for none).
func (a *agent) activityAnswer(ctx workflow.Context, c model.ToolCall, queue string, out activities.RunToolResult, err error) (string, bool) {
	switch {
	case queue != "" && a.host.answered(ctx, err):
		return a.host.gone(c.Name), true
	case err != nil:
		return fmt.Sprintf("Tool %s failed: %v", c.Name, api.RootMessage(err)), true
	}
	a.diffs.keep(c.ID, out.Diff) // for the user, not in the message
	a.window.heard.Text(out.Content)
	return out.Content, out.IsError
}

// appendAnswer appends msg, the tool message answering c, once the guard
// has noted its result.
func (a *agent) appendAnswer(c model.ToolCall, msg model.Message) {
	r := todo.Result{Content: msg.Content, IsError: msg.IsError}
	todo.NoteResult(&a.todo, a.cfg.Todo, c.Name, c.Arguments, &r)
	msg.Content = r.Content
	a.append(msg)
}

// callRef locates call i of the model's answer just appended, for RunTool
// to read it from the transcript, with its digest, against which a worker
// checks the copy in its cache.
func (a *agent) callRef(i int, c model.ToolCall) *transcript.CallRef {
	return &transcript.CallRef{Message: len(a.window.msgs) - 1, Index: i, Digest: transcript.CallDigest(c)}
}

// todoTools names the workflow's own tools for a model call; none when the
// todo list is disabled.
func (a *agent) todoTools() *activities.TodoTools {
	if !a.cfg.Todo.Enabled {
		return nil
	}
	return &activities.TodoTools{WriteDescription: a.cfg.Todo.ToolDescription}
}

// inWorkflow reports whether a tool runs as workflow code rather than as an
// activity: the todo, plan and subagent tools (todo's table) only change
// workflow state.
func (a *agent) inWorkflow(name string) bool {
	return a.cfg.Todo.Enabled && todo.KindOf(name) != todo.KindNone
}

// agentTools are the tools of todo's table that the workflow runs itself.
var agentTools = map[string]func(*agent, workflow.Context, model.ToolCall) todo.Result{
	todo.ToolSpawnSubagent:  (*agent).spawn,
	todo.ToolCancelSubagent: (*agent).cancelSubagent,
}

// workflowTool runs a plan tool (todo.ApplyPlan) or an agent tool.
func (a *agent) workflowTool(ctx workflow.Context, c model.ToolCall) todo.Result {
	if run, ok := agentTools[c.Name]; ok {
		return run(a, ctx, c)
	}
	return a.planTool(ctx, c)
}
