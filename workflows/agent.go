package workflows

import (
	"fmt"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// agent is the state of one AgentWorkflow run: the loop's own, then its
// components, each with its own state, handlers and part of the carry
// (doc.go). Only workflow code touches it.
type agent struct {
	cfg  config
	opts Options

	// The loop's own: where the session stands, and the turn running now
	// (cur, with where it stands: turn.go; nil between turns).
	status       string
	turns        int
	modelCalls   int
	continuation bool
	ended        bool
	cur          *turnCursor
	modelError   *api.ModelError // the model call that ended the last turn (clients read one being retried from its activity)
	failedTurn   bool            // the last turn ended on a model error; retry_turn may run it again
	usage        api.Usage
	// served is the model the worker answered the last call with, which
	// state.model shows when the input names none (the worker's default).
	served string
	// turnsHere counts the turns this run took up, startEvents its
	// history's length at its start (session.go).
	turnsHere   int
	startEvents int
	// lean says the run takes patchLeanTurn (patches.go); idle is its
	// moving idle timer (session.go).
	lean bool
	idle idleTimer
	// keepCut says the run takes patchKeepInterrupted, once an interrupt
	// reached a model call (interrupt.go); nil before.
	keepCut *bool
	// previews says the run takes patchPreviewWrite, once a call waited
	// that it would preview (preview.go); nil before.
	previews *bool
	// busySince is when the status last became running (publish.go).
	busySince time.Time
	// Signal channels, drained by pollSignals and, before the run hands
	// over or completes, by drainSignals.
	userCh, endCh, resumeCh workflow.ReceiveChannel

	// The components.
	window    window          // the transcript and the model's view of it (window.go)
	todo      todo.State      // the list and its guards (todo/)
	plans     *todo.PlanState // the plan and the tree's event log (plans.go)
	inbox     *inbox          // the messages waiting for their turn, the replies owed (replies.go)
	approvals approvals       // the human answers the run waits for (approvals.go)
	tree      tree            // the bus, the children, the agents known to have ended (tree.go)
	host      *host           // where the tools run (host.go)
	reporters *reporting      // the webhooks and their queues (reporters.go)
	published published       // the search attributes last sent (publish.go)
	diffs     toolDiffs       // the latest tool calls' diffs, for the user (diffs.go)
}

// AgentWorkflow runs one agent: a single task from a prompt, or a chat
// session fed by send_message and user_message. See the package doc.
func AgentWorkflow(ctx workflow.Context, in api.AgentInput) (api.AgentResult, error) {
	return agentWorkflow(ctx, in, Options{})
}

// Options are a worker's settings of AgentWorkflow (RegisterWithOptions).
// Every worker of a task queue must use the same, as with the workflow's
// code: a run replays on any of them.
type Options struct {
	// Encrypted says the worker seals its payloads (worker/codec). Search
	// attributes stay readable on the server, which indexes them, so the
	// TodoCurrent attribute is left empty: it would show a todo item.
	Encrypted bool
	// BuildID is the build id the worker records in the workflow tasks it
	// completes when it is not MarkBuild's (a version of a worker
	// deployment): a history whose first task it completed is its own
	// (protocol.go). It differs between builds, never between the workers
	// of one, and changes no command.
	BuildID string
}

func agentWorkflow(ctx workflow.Context, in api.AgentInput, opts Options) (api.AgentResult, error) {
	h, err := readHandover(in)
	if err != nil {
		// Before any command, as when the SDK could not decode the input.
		return api.AgentResult{}, fmt.Errorf("AgentWorkflow input: %w", err)
	}
	refuseForeign(ctx, h, opts)
	cfg, err := resolve(in)
	info := workflow.GetInfo(ctx)
	switch {
	case err != nil:
	case h.Carry != nil && info.ContinuedExecutionRunID == "":
		err = api.ErrCarryOnStart
	case in.TreeKey != "" && info.ParentWorkflowExecution == nil:
		err = api.ErrTreeKeyOfRoot
	case in.Session != "" && info.ParentWorkflowExecution == nil:
		err = api.ErrSessionOfRoot
	}
	cfg.carry = h.Carry
	cfg.session = sessionKey(info, in)
	if err != nil {
		return refuseInput(ctx, in, err)
	}
	a := newAgent(cfg)
	a.opts = opts
	if p := info.ParentWorkflowExecution; p != nil {
		a.tree.parentID = p.ID
		a.tree.key = in.TreeKey
	}
	a.startEvents = info.GetCurrentHistoryLength()
	a.tree.rootID = info.WorkflowExecution.ID
	if r := info.RootWorkflowExecution; r != nil {
		a.tree.rootID = r.ID
	}
	a.plans.Peers = a
	if err := a.register(ctx); err != nil {
		return api.AgentResult{}, err
	}
	// The workspace is checked once the handlers are registered: the check
	// is a local activity, a wait in which the SDK refuses an update that
	// finds no handler, such as the first message sent right after the
	// start.
	if a.cfg.in.Workspace, err = checkWorkspaceRoot(ctx, in.Workspace); err != nil {
		return refuseInput(ctx, in, err)
	}
	a.lean = patched(ctx, patchLeanTurn)
	// Asked only of a run that carries something to restore: each read
	// of a patch records a marker and upserts TemporalChangeVersion.
	if a.plans.NullOutputs() && patched(ctx, patchPlanRestored) {
		a.plans.Restored()
	}
	a.joinTree(ctx)
	a.adoptChildren(ctx)
	a.reporters.start(ctx)
	a.publish(ctx)

	// A subagent whose root is gone (terminated by hand: its children
	// outlive it, see childPolicy) stops its loop as if cancelled.
	lctx, leave := workflow.WithCancel(ctx)
	a.tree.leave = leave
	res, err := a.loop(lctx)
	if err != nil {
		a.endTree(ctx, err)
	}
	return res, err
}

// refuseInput fails a run whose input cannot be served. The state query
// still answers, so that a client polling the run sees it failed and why,
// not an unknown query (or the state of a run that never began).
func refuseInput(ctx workflow.Context, in api.AgentInput, err error) (api.AgentResult, error) {
	failed := api.State{AgentID: in.AgentID, Status: api.StatusFailed, Todos: []todo.Item{}, Events: []todo.Event{},
		Subagents: map[string]api.State{}, Reporters: []api.ReporterStatus{}, Extra: (&todo.State{}).Extra()}
	_ = workflow.SetQueryHandler(ctx, api.StateQuery, func() (api.State, error) { return failed, nil })
	_ = workflow.SetQueryHandler(ctx, api.MessagesQuery, func(int, int) ([]model.Message, error) { return []model.Message{}, nil })
	// The run list must not show it running for ever.
	_ = workflow.UpsertTypedSearchAttributes(ctx, api.AgentStatusKey.ValueSet(api.StatusFailed))
	return api.AgentResult{}, temporal.NewNonRetryableApplicationError("invalid AgentWorkflow input: "+err.Error(), "InvalidInput", nil)
}

// result is what a finished run returns, with its final state.
func (a *agent) result(final api.State) api.AgentResult {
	res := api.AgentResult{
		AgentID:    a.cfg.AgentID,
		Reply:      a.lastReply(),
		Turns:      a.turns,
		ModelCalls: a.modelCalls,
		Todos:      a.todo.List(),
		State:      &final,
	}
	fitResult(&res)
	return res
}

// patchedOnce is patched(ctx, id), read the first time the run needs it and
// kept in *memo: a patch that only a rare event reaches (patches.go).
func patchedOnce(ctx workflow.Context, memo **bool, id string) bool {
	if *memo == nil {
		on := patched(ctx, id)
		*memo = &on
	}
	return **memo
}

// newAgent builds a run's agent: each component from its part of the
// carry, or fresh for a session's first run.
func newAgent(cfg config) *agent {
	c := cfg.carry
	var reports []CarriedReporter
	if c != nil {
		reports = c.Reports
	}
	a := &agent{
		cfg:          cfg,
		status:       api.StatusRunning,
		continuation: cfg.Todo.Continuation,
		window:       newWindow(cfg),
		inbox:        newInbox(c, cfg.in.Prompt),
		plans:        todo.NewPlanState(cfg.AgentID),
		approvals:    newApprovals(c),
		tree:         newTree(c),
		reporters:    newReporting(cfg.AgentID, cfg.session, cfg.in.Reporters, reports),
		host:         newHost(cfg.in, cfg.HostWait),
	}
	for _, m := range a.inbox.queue {
		a.window.heard.Text(m.Text) // in the run's input
	}
	if c == nil {
		return a
	}
	if c.Plans != nil {
		a.plans = c.Plans
	}
	a.todo = c.Todo
	s := c.Session
	a.turns, a.modelCalls, a.continuation, a.ended = s.Turns, s.ModelCalls, s.Continuation, s.Ended
	a.failedTurn, a.modelError, a.usage, a.served = s.FailedTurn, s.ModelError, s.Usage, s.Served
	a.diffs = newToolDiffs(c.Diffs)
	if p := c.Published; p != nil {
		// What the previous run last sent, which this run inherits: read
		// from the carry, not from the attributes, which an encrypted
		// worker sent blank.
		a.published = published{total: p.Total, completed: p.Completed, current: p.Current, status: p.Status, set: true}
	}
	return a
}
