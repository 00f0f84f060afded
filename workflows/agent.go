package workflows

import (
	"errors"
	"slices"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// agent is the state of one AgentWorkflow run. Only workflow code touches it.
type agent struct {
	cfg config

	status       string
	turns        int
	modelCalls   int
	msgs         []model.Message
	todo         todo.State
	continuation bool

	inbox *inbox // the messages waiting for their turn, the replies owed (replies.go)
	// turnsHere counts the turns this run took up, startEvents its
	// history's length at its start (session.go).
	turnsHere   int
	startEvents int
	ended       bool

	plans     *todo.PlanState
	approvals approvals // the human answers the run waits for (approvals.go)

	parentID string // the parent's workflow id; "" for the root
	// cur is the turn running now, and where it stands (turn.go); nil
	// between turns.
	cur *turnCursor
	// leaveTree stops the run's loop: its root is gone (tree_send.go).
	leaveTree  workflow.CancelFunc
	children   map[string]*child // looked up; childOrder gives the order
	childOrder []string
	gone       map[string]string // agents of the tree known to have ended -> how

	reporters *reporting

	published published

	opts Options
	// Signal channels, drained by pollSignals and, before the run hands
	// over or completes, by drainSignals.
	userCh, endCh, resumeCh workflow.ReceiveChannel

	modelError    *ModelError // the model call that ended the last turn (clients read one being retried from its activity)
	failedTurn    bool        // the last turn ended on a model error; retry_turn may run it again
	usage         Usage
	comp          compaction
	compactAsked  bool // compact_context waits for the loop
	compactAnswer CompactResult
	sentTokens    int // the estimate of the last model request, for an overflow's new budget
	// contextLimit is the budget the provider taught the run when it
	// refused a request as too long (todo.ContextLimit); 0 until then.
	contextLimit int
	// summaryCalls counts the summarising model calls among modelCalls.
	summaryCalls int
	eventsPruned int // events left out of the log by earlier continuations
	// childrenPruned counts the finished children earlier runs left out
	// of the carry (maxChildren).
	childrenPruned int

	bus bus
	// finishNote tells the model, before its next call, that its parent's
	// session is ending (a subagent asked to finish).
	finishNote string
	host       *host // where the tools run (host.go)

	// Each model call carries the messages added since the previous one
	// (sentMsgs is how many were sent so far, epoch counts the messages
	// taken back after they were sent), so that a worker keeps the
	// transcript (activities.TranscriptCache) and one that lacks it reads
	// it from the run's history, never by replaying the run.
	sentMsgs      int
	epoch         int
	carriedUnsent bool

	// diffs are the latest tool calls' diffs, for the user (diffs.go).
	diffs toolDiffs
}

// AgentWorkflow runs one agent: a single task from a prompt, or a chat
// session fed by send_message and user_message. See the package doc.
func AgentWorkflow(ctx workflow.Context, in AgentInput) (AgentResult, error) {
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

func agentWorkflow(ctx workflow.Context, in AgentInput, opts Options) (AgentResult, error) {
	refuseForeign(ctx, in, opts)
	cfg, err := resolve(in)
	if err == nil {
		cfg.in.Workspace, err = checkWorkspaceRoot(ctx, in.Workspace)
	}
	if err != nil {
		// The state query still answers, so that a client polling the run
		// sees it failed and why, not an unknown query.
		failed := State{AgentID: in.AgentID, Status: StatusFailed, Todos: []todo.Item{}, Events: []todo.Event{},
			Subagents: map[string]State{}, Reporters: []ReporterStatus{}, Extra: (&todo.State{}).Extra()}
		_ = workflow.SetQueryHandler(ctx, StateQuery, func() (State, error) { return failed, nil })
		_ = workflow.SetQueryHandler(ctx, MessagesQuery, func(int, int) ([]model.Message, error) { return []model.Message{}, nil })
		// The run list must not show it running for ever.
		_ = workflow.UpsertTypedSearchAttributes(ctx, AgentStatusKey.ValueSet(StatusFailed))
		return AgentResult{}, temporal.NewNonRetryableApplicationError("invalid AgentWorkflow input: "+err.Error(), "InvalidInput", nil)
	}
	a := newAgent(cfg)
	a.opts = opts
	info := workflow.GetInfo(ctx)
	if p := info.ParentWorkflowExecution; p != nil {
		a.parentID = p.ID
	}
	a.startEvents = info.GetCurrentHistoryLength()
	a.bus.rootID = info.WorkflowExecution.ID
	if r := info.RootWorkflowExecution; r != nil {
		a.bus.rootID = r.ID
	}
	a.bus.restore(cfg.in.Carry.tree())
	a.plans.Peers = a
	if err := a.register(ctx); err != nil {
		return AgentResult{}, err
	}
	a.joinTree(ctx)
	a.adoptChildren(ctx)
	a.reporters.start(ctx)
	a.publish(ctx)

	// A subagent whose root is gone (terminated by hand: its children
	// outlive it, see childPolicy) stops its loop as if cancelled.
	lctx, leave := workflow.WithCancel(ctx)
	a.leaveTree = leave
	res, err := a.loop(lctx)
	if err != nil {
		a.endTree(ctx, err)
	}
	return res, err
}

// result is what a finished run returns, with its final state.
func (a *agent) result(final State) AgentResult {
	res := AgentResult{
		AgentID:    a.cfg.agentID,
		Reply:      a.lastReply(),
		Turns:      a.turns,
		ModelCalls: a.modelCalls,
		Todos:      a.todo.List(),
		State:      &final,
	}
	fitResult(&res)
	return res
}

func newAgent(cfg config) *agent {
	a := &agent{
		cfg:          cfg,
		status:       StatusRunning,
		continuation: cfg.todo.Continuation,
		inbox:        newInbox(cfg.in.Carry, cfg.in.Prompt),
		plans:        todo.NewPlanState(cfg.agentID),
		children:     map[string]*child{},
		gone:         map[string]string{},
		reporters:    newReporting(cfg.agentID, cfg.in.Reporters, cfg.in.Carry.reports()),
		host:         newHost(cfg.in, cfg.hostWait),
	}
	if c := cfg.in.Carry; c != nil {
		if c.Plans != nil {
			a.plans = c.Plans
		}
		for _, id := range sortedKeys(c.Subagents) {
			st := c.Subagents[id]
			a.children[id] = &child{AgentID: id, State: &st, Done: true}
			a.gone[id] = st.Status
			a.childOrder = append(a.childOrder, id)
		}
		for _, r := range c.Running {
			a.children[r.AgentID] = &child{AgentID: r.AgentID, WorkflowID: r.WorkflowID, deadline: r.Deadline}
			a.childOrder = append(a.childOrder, r.AgentID)
		}
		a.msgs = c.Messages
		a.todo = c.Todo
		a.turns, a.modelCalls, a.summaryCalls = c.Turns, c.ModelCalls, c.SummaryCalls
		a.contextLimit = c.ContextLimit
		a.continuation = c.Continuation
		a.ended = c.Ended
		a.failedTurn, a.modelError, a.usage = c.FailedTurn, c.ModelError, c.Usage
		a.eventsPruned = c.EventsPruned
		a.childrenPruned = c.SubagentsPruned
		a.approvals.remembered = c.Remembered
		if p := c.Published; p != nil {
			// What the previous run last sent, which this run inherits:
			// read from the carry, not from the attributes, which an
			// encrypted worker sent blank.
			a.published = published{total: p.Total, completed: p.Completed, current: p.Current, status: p.Status, set: true}
		}
		// The carried messages are in this run's input already; its first
		// model call does not send them again, only their digests: a
		// worker finds them in its copy of the run before, or reads them
		// from this run's first event.
		a.sentMsgs = len(a.msgs)
		a.carriedUnsent = true
		return a
	}
	base := cfg.in.SystemPrompt
	if base == "" {
		base = todo.DefaultSystemPrompt
	}
	a.msgs = []model.Message{{Role: model.RoleSystem, Content: todo.SystemPrompt(base, cfg.todo), ToolCalls: []model.ToolCall{}}}
	return a
}

// rootMessage is the innermost message of an activity or child error, the
// part a model or a user can act on ("no such file"), without Temporal's
// wrapping and its "(type: ..., retryable: ...)" suffix.
func rootMessage(err error) string {
	for next := errors.Unwrap(err); next != nil; next = errors.Unwrap(err) {
		err = next
	}
	if app, ok := err.(*temporal.ApplicationError); ok && app.Message() != "" {
		return app.Message()
	}
	return err.Error()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
