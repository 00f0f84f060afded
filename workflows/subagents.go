package workflows

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/internal/text"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// child is a subagent started by this run, or by an earlier run of this
// workflow and still running at its continue-as-new (adopted).
type child struct {
	AgentID    string     `json:"agent_id"`
	WorkflowID string     `json:"workflow_id"`
	State      *api.State `json:"state"`
	Done       bool       `json:"done"`
	// deadline is when the server ends the child (subagent_timeout_s).
	deadline time.Time
	// cancel asks a child this run started to stop (cancel_subagent,
	// end_session's grace over); nil for a child of an earlier run (adopted,
	// or finished), which is asked by a cancel request to its workflow id.
	cancel      workflow.CancelFunc
	cancelAsked bool
	// end is the tree_end of a child this run started, taken in before
	// its future resolved.
	end *End
	why string // why it was cancelled
	// finishAsked: the child was asked to finish (end_session).
	finishAsked bool
	// reply is the head of a finished child's answer, how how it ended.
	reply, how string
	// sum is the summary of State, and sumBytes what it takes as JSON,
	// made once per State (fullSummary).
	sum      *api.State
	sumOf    *api.State
	sumBytes int
}

// fullSummary is a finished child's summary and its size as JSON, made
// once for each final state the child gets: every state query and every
// publish show it.
func (ch *child) fullSummary() (api.State, int) {
	if ch.sumOf != ch.State {
		s := summary(*ch.State)
		b, _ := json.Marshal(s)
		ch.sum, ch.sumOf, ch.sumBytes = &s, ch.State, len(b)
	}
	return *ch.sum, ch.sumBytes
}

// SpawnArgs are the arguments of spawn_subagent.
type SpawnArgs struct {
	AgentID string       `json:"agent_id"`
	Task    string       `json:"task"`
	Tools   []string     `json:"tools,omitempty"`
	Model   string       `json:"model,omitempty"`
	Todo    *todo.Config `json:"todo,omitempty"`
}

// childPolicy: a subagent outlives the run that started it, because the
// server applies a parent close policy at continue-as-new too. The
// continuation adopts the running children (Carry.Running); a parent that
// fails or is cancelled cancels them itself (endTree).
const childPolicy = enumspb.PARENT_CLOSE_POLICY_ABANDON

// spawn starts a subagent as a child workflow without waiting for it.
func (a *agent) spawn(ctx workflow.Context, c model.ToolCall) todo.Result {
	var args SpawnArgs
	dec := json.NewDecoder(bytes.NewReader(c.Arguments))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&args); err != nil {
		return todo.Result{IsError: true, Content: fmt.Sprintf(`spawn_subagent takes {"agent_id": "...", "task": "...", "tools"?: [...], "model"?: "...", "todo"?: {...}}: %v`, err)}
	}
	if err := api.CheckAgentID(args.AgentID); err != nil {
		return todo.Result{IsError: true, Content: err.Error()}
	}
	switch {
	case args.AgentID == a.cfg.AgentID || args.AgentID == api.DefaultAgentID:
		return todo.Result{IsError: true, Content: fmt.Sprintf("agent_id %q is taken by an agent of this run tree; choose another", args.AgentID)}
	case a.tree.children[args.AgentID] != nil:
		return todo.Result{IsError: true, Content: fmt.Sprintf("a subagent %q already exists in this run; choose another agent_id", args.AgentID)}
	case a.tree.Member(args.AgentID) != nil:
		return todo.Result{IsError: true, Content: fmt.Sprintf("agent_id %q is taken by an agent of this run tree; choose another", args.AgentID)}
	case strings.TrimSpace(args.Task) == "":
		return todo.Result{IsError: true, Content: "task is empty: say what the subagent should do"}
	case len(args.Task) > todo.MaxMessageBytes:
		return todo.Result{IsError: true, Content: fmt.Sprintf("task is %d bytes: at most %d; write the material to a file and name it in the task", len(args.Task), todo.MaxMessageBytes)}
	}
	if why := todo.SpawnRefusal(a.cfg.in.Depth, a.runningChildren()); why != "" {
		return todo.Result{IsError: true, Content: fmt.Sprintf("subagent %q was not spawned: %s", args.AgentID, why)}
	}
	// A subagent may use the tools of its parent, never more: left out, it
	// gets all of them; asked for, each must be one the parent may use.
	if args.Tools == nil {
		args.Tools = a.cfg.in.Tools
	} else if a.cfg.in.Tools != nil {
		for _, t := range args.Tools {
			if !todo.Allowed(a.cfg.in.Tools, t) {
				return todo.Result{IsError: true, Content: fmt.Sprintf("tools: %q is not among the tools you may use (%s); a subagent gets at most yours", t, strings.Join(a.cfg.in.Tools, ", "))}
			}
		}
	}
	in := api.AgentInput{
		Prompt:       args.Task,
		SystemPrompt: a.cfg.in.SystemPrompt,
		Model:        childModel(a.cfg.in.Model, args.AgentID, args.Model),
		// A model other than the one the child would get anyway is the
		// model's choice, which the worker checks.
		ModelChosen: args.Model != "" && args.Model != childModel(a.cfg.in.Model, args.AgentID, ""),
		Workspace:   a.cfg.in.Workspace,
		// The tree shares one workspace, so a subagent's tools run where
		// its parent's do.
		WorkspaceShared: a.cfg.in.WorkspaceShared,
		HostWaitS:       a.cfg.in.HostWaitS,
		MaxTurns:        a.cfg.in.MaxTurns,
		Context:         a.cfg.in.Context,
		AgentID:         args.AgentID,
		Depth:           a.cfg.in.Depth + 1,
		Tools:           args.Tools,
		Approval:        a.cfg.in.Approval,
		// Grandchildren live under the same limits.
		SubagentTimeoutS:  a.cfg.in.SubagentTimeoutS,
		SubagentGraceS:    a.cfg.in.SubagentGraceS,
		ModelRetryWindowS: a.cfg.in.ModelRetryWindowS,
		Protocol:          api.Protocol,
		TreeKey:           a.treeKey(ctx),
		// The tree shares its root's workspace, named by the session.
		Session: a.cfg.session,
	}
	if args.Todo != nil {
		in.Todo = *args.Todo
	}
	if _, err := resolve(in); err != nil {
		return todo.Result{IsError: true, Content: "the subagent's settings are invalid: " + err.Error()}
	}
	host, err := a.host.toolQueue(ctx)
	if err != nil {
		return todo.Result{IsError: true, Content: fmt.Sprintf("subagent %q could not be started: %v", args.AgentID, err)}
	}
	in.WorkspaceHost = host
	id := workflow.GetInfo(ctx).WorkflowExecution.ID + "/" + args.AgentID
	summary := "subagent " + args.AgentID + ": " + text.Shorten(args.Task, 120)
	opts := workflow.ChildWorkflowOptions{
		WorkflowID:        id,
		ParentClosePolicy: childPolicy,
		StaticSummary:     summary,
		// As a root's starter does (api.MemoSummary): the summary stays
		// with the runs the subagent continues in.
		Memo: map[string]any{api.MemoSummary: summary},
		// The server ends a subagent that overruns its limit; its parent
		// then fails the steps that waited on it.
		WorkflowExecutionTimeout: a.cfg.SubagentTimeout,
		TypedSearchAttributes:    api.StartSearchAttributes(),
	}
	cctx, cancel := workflow.WithCancel(ctx)
	cctx = workflow.WithChildOptions(cctx, opts)
	fut := workflow.ExecuteChildWorkflow(cctx, api.WorkflowName, in)
	if err := fut.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		return todo.Result{IsError: true, Content: fmt.Sprintf("subagent %q could not be started: %v", args.AgentID, api.RootMessage(err))}
	}
	ch := &child{AgentID: args.AgentID, WorkflowID: id, cancel: cancel, deadline: workflow.Now(ctx).Add(a.cfg.SubagentTimeout)}
	a.tree.children[args.AgentID] = ch
	a.tree.childOrder = append(a.tree.childOrder, args.AgentID)
	workflow.Go(ctx, func(gctx workflow.Context) { a.awaitChild(gctx, ch, fut) })
	a.publish(ctx)
	return todo.Result{Content: fmt.Sprintf("Subagent %q is working on its task as workflow %s. Its plan events reach you: "+
		"subscribe with subscribeToTasks to read them, or make a step wait for one of its steps with addDependentStep. "+
		"You can go on meanwhile; when you answer while a step waits on it, the run waits for the subagent.", args.AgentID, id)}
}

// liveBlockers are the agents that blocked plan steps wait on and that may
// still deliver: those not known to have ended (the root tells, after
// their events).
func (a *agent) liveBlockers() []string {
	var live []string
	for _, id := range a.plans.BlockedOn() {
		if _, ended := a.tree.gone[id]; !ended {
			live = append(live, id)
		}
	}
	return live
}

// blockedSignature changes whenever a blocked step gains or loses a
// dependency, is unblocked or fails.
func (a *agent) blockedSignature() string {
	p := a.plans.Current()
	if p == nil {
		return ""
	}
	var b strings.Builder
	for _, s := range p.Steps {
		fmt.Fprintf(&b, "%s=%s/%d;", s.StepID, s.Status, len(s.BlockedBy))
	}
	return b.String()
}

// waitBlocked is the first decision at the end of a turn: while a plan step
// waits on a subagent that is still working, the run waits (durably, no
// polling) until a step unblocks or fails, and then the turn goes on.
func (a *agent) waitBlocked(ctx workflow.Context) (bool, error) {
	// end_session (or an interrupt) stops the root's wait: the turn ends, and the wind-down
	// gives the children subagent_grace_s (a child may be waiting on this
	// very agent). A subagent asked to finish keeps waiting: its grace runs.
	stop := func() bool { return (a.ended || a.stopping()) && a.isRoot() }
	if len(a.liveBlockers()) == 0 || stop() {
		return false, nil
	}
	before := a.blockedSignature()
	a.status = api.StatusBlocked
	a.publish(ctx)
	// The wait may last as long as the agents it waits on work, and their
	// news grow this run's history: when a handover is due, the turn is
	// handed over with the run (a caller waiting for its reply is told
	// where it will come from: replies.go).
	err := workflow.Await(ctx, func() bool {
		return a.blockedSignature() != before || len(a.liveBlockers()) == 0 || stop() || a.handOverDue(ctx)
	})
	if err == nil && a.blockedSignature() == before && len(a.liveBlockers()) > 0 && !stop() {
		return false, errHandOver
	}
	a.status = api.StatusRunning
	return err == nil, err
}

// adopted reports whether an earlier run of this workflow started the
// child: this run has no future for it.
func (c *child) adopted() bool { return c.cancel == nil }

// runningChildren counts the subagents still working.
func (a *agent) runningChildren() int {
	n := 0
	for _, id := range a.tree.childOrder {
		if !a.tree.children[id].Done {
			n++
		}
	}
	return n
}

// subagentStates is state.subagents: each child's last reported state, the
// finished ones bounded as fullChildren and maxChildren say.
func (a *agent) subagentStates() map[string]api.State {
	out := make(map[string]api.State, len(a.tree.children))
	finished, room := 0, fullChildrenBytes
	for _, id := range slices.Backward(a.tree.childOrder) {
		ch := a.tree.children[id]
		switch {
		case !ch.Done && ch.end != nil:
			// Its tree_end came and its future has not resolved yet: it
			// has ended, and shows so, as the carry hands it on
			// (runningChildList).
			if finished++; finished > maxChildren {
				continue
			}
			out[id] = ended(a.endState(*ch.end), ch.end.Reply)
		case !ch.Done && a.tree.briefs[id] != nil:
			out[id] = briefState(a.tree.briefs[id], id)
		case !ch.Done || ch.State == nil:
			out[id] = api.State{AgentID: id, Status: api.StatusRunning, Todos: []todo.Item{}, Events: []todo.Event{}, Subagents: map[string]api.State{}}
		default:
			finished++
			if finished > maxChildren {
				continue
			}
			out[id] = ended(*ch.State, ch.reply)
			if finished <= fullChildren && ch.State.Ended == nil {
				if sum, n := ch.fullSummary(); n <= room {
					out[id], room = sum, room-n
				}
			}
		}
	}
	return out
}

// finishedChildren counts the children that have ended.
func (a *agent) finishedChildren() int { return len(a.tree.childOrder) - a.runningChildren() }

// childModel is the model reference of a subagent: the one it asks for, or
// its parent's; a scripted parent's subagent reads its own list of the same
// scenario file.
func childModel(parent, agentID, asked string) string {
	if asked != "" {
		return asked
	}
	if path, ok := strings.CutPrefix(parent, "script:"); ok {
		if i := strings.LastIndex(path, "#"); i >= 0 {
			path = path[:i]
		}
		return "script:" + path + "#" + agentID
	}
	return parent
}
