package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/activities"
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

	inbox   []Inbound
	replies map[int]string // send_message seq -> reply; looked up, never ranged
	nextSeq int
	ended   bool

	plans  *todo.PlanState
	answer *approval // the approve_plan answer, until the waiting startPlan takes it
	// toolWait is the tool call waiting for approve_tool, toolAnswer its
	// answer until approveTools takes it; remembered are the tools
	// approved for the rest of the session.
	toolWait   *PendingApproval
	toolAnswer *ToolApprovalArgs
	remembered []string

	parentID   string            // the parent's workflow id; "" for the root
	children   map[string]*child // looked up; childOrder gives the order
	childOrder []string
	gone       map[string]string // agents of the tree known to have ended -> how
	taskEvents workflow.ReceiveChannel
	sent       []workflow.Future // task_event signals in flight

	reporters []*reporter

	published published

	// durable is set for runs started since the durable-sessions version:
	// model retries in the workflow, failed turns, idle timers cancelled,
	// signals drained before the run ends, the context budget. Runs started
	// before keep the old command sequence, so their histories replay.
	durable bool
	opts    Options
	// bufferedSignals is set for runs started since the buffered-signals
	// version (see pollSignals).
	bufferedSignals bool
	// treeOrder is set for runs started since the tree-delivery-order
	// version: a workflow task's task_events are taken in before its other
	// signals (drainSignals), and an end notice after the events it follows
	// (holdEnd).
	treeOrder bool
	// Signal channels, drained by receiveSignals and, before the run hands
	// over or completes, by drainSignals.
	userCh, endCh, resumeCh workflow.ReceiveChannel

	modelError    *ModelError // the model call failing now, or the one that ended the last turn
	failedTurn    bool        // the last turn ended on a model error; retry_turn may run it again
	usage         Usage
	comp          compaction
	compactAsked  bool // compact_context waits for the loop
	compactAnswer CompactResult
	sentTokens    int // the estimate of the last model request, for an overflow's new budget
	eventsPruned  int // events left out of the log by earlier continuations

	// tree is set for runs on the tree's bus (tree.go): events reach the
	// agents that want them wherever they are, human waits surface at the
	// root. Older runs keep relaying through their parent.
	tree bool
	bus  bus
	// earlyResume is a resume that came while a turn ran, before the pause
	// it answers was recorded.
	earlyResume *string
	// finishNote tells the model, before its next call, that its parent's
	// session is ending (a subagent asked to finish).
	finishNote string
	// lastCall: the next model call is the escalation's last one of the
	// turn, offered no tools.
	lastCall bool

	// hostQueue is the task queue of the host that holds the workspace
	// (host.go); "" until the run learns it. hostSilent is when a tool
	// call last found that host not answering, nil once one ran there.
	hostQueue  string
	hostNone   bool // the worker asked polls no host queue: tools run on the shared queue
	hostSilent *time.Time
	// folded: the run started with folded-versions (agent.versions), so
	// it has every change before it without asking for their markers, and
	// asks for its host by a local activity.
	folded bool
	// lean: the run started with folded-versions 2, and publishes its
	// search attributes sparingly (see publish).
	lean bool
	// direct: the run started with folded-versions 3, and sends its tool
	// calls to the host on the shared queue (RunToolOnHost) until one is
	// refused (host.go).
	direct bool

	// Each model call carries the messages added since the previous one
	// (sentMsgs is how many were sent so far, epoch counts the messages
	// taken back after they were sent), so that a worker's transcript cache
	// spares the query (activities.TranscriptCache).
	//
	// This changed what the activities' inputs hold, not which commands the
	// workflow sends, so it needs no version: a replay matches an activity
	// command by its id and type, never its input (sdk internal
	// isCommandMatchEvent), and a run that started before it sends, from
	// its next model call on, what a worker's cache cannot have seen: the
	// worker reads that by query. A version would cost every run a marker
	// and an upsert of TemporalChangeVersion, which the benchmark prices at
	// about what a query costs (BENCHMARKS.md).
	sentMsgs int
	epoch    int
}

// durableVersion marks the durable-sessions change of the command sequence
// (see agent.durable).
const (
	durableChange  = "durable-sessions"
	durableVersion = 1
	treeChange     = "agent-tree"
	treeVersion    = 1
	// signalsChange: signals are taken from the channels' buffers (see
	// pollSignals), where the main coroutine can drain them too.
	signalsChange  = "buffered-signals"
	signalsVersion = 1
	// treeOrderChange: what the signals of the tree's bus say is taken in
	// as it happened, whatever order Temporal delivers them in (see
	// agent.treeOrder).
	treeOrderChange  = "tree-delivery-order"
	treeOrderVersion = 1
	// foldedChange: the changes above and workspace-host (host.go) under
	// one marker (see agent.versions). Version 2 adds lean publishing
	// (agent.publish): no upsert of what the run was started with, and a
	// busy run's upserts at most once a second. Version 3 sends tool calls
	// for the workspace's host on the shared queue first (host.go,
	// agent.direct).
	foldedChange  = "folded-versions"
	foldedVersion = 3
	leanVersion   = 2
	directVersion = 3
)

// versions reads which changes of the command sequence the run was started
// with. A run started since folded-versions has every change before it
// (durable-sessions, agent-tree, buffered-signals, tree-delivery-order and
// workspace-host), recorded under that one marker: every workflow.GetVersion
// costs the run a marker and an upsert of the TemporalChangeVersion search
// attribute, and an upsert is the dearest thing a step does on the embedded
// server (BENCHMARKS.md). A run started before has no folded-versions
// marker (GetVersion answers DefaultVersion while it replays) and reads the
// markers it has, each where it always did.
func (a *agent) versions(ctx workflow.Context, in AgentInput) {
	if v := workflow.GetVersion(ctx, foldedChange, workflow.DefaultVersion, foldedVersion); v >= 1 {
		a.durable, a.bufferedSignals, a.treeOrder, a.folded = true, true, true, true
		a.lean = v >= leanVersion
		a.direct = v >= directVersion
		a.tree = a.parentID == "" || in.TreeBus
		return
	}
	a.durable = workflow.GetVersion(ctx, durableChange, workflow.DefaultVersion, durableVersion) >= durableVersion
	if a.durable && workflow.GetVersion(ctx, treeChange, workflow.DefaultVersion, treeVersion) >= treeVersion {
		// A subagent speaks the bus only when its parent does.
		a.tree = a.parentID == "" || in.TreeBus
	}
	a.bufferedSignals = a.durable && workflow.GetVersion(ctx, signalsChange, workflow.DefaultVersion, signalsVersion) >= signalsVersion
	a.treeOrder = a.bufferedSignals && workflow.GetVersion(ctx, treeOrderChange, workflow.DefaultVersion, treeOrderVersion) >= treeOrderVersion
}

// published remembers the search attributes last sent, so that an unchanged
// value adds no command to history.
type published struct {
	total, completed int64
	current, status  string
	set              bool // false before the first upsert (or, in a lean run, the start's attributes)
	// at is when they were sent (lean runs, see agent.publish).
	at time.Time
}

// publishEvery is how often, at most, a busy run (status running) of a lean
// run upserts its search attributes: the run list is for people, and every
// upsert is a command, an event and a write to the visibility store, the
// dearest thing a step does on the embedded server (BENCHMARKS.md).
const publishEvery = time.Second

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
}

func agentWorkflow(ctx workflow.Context, in AgentInput, opts Options) (AgentResult, error) {
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
		return AgentResult{}, temporal.NewNonRetryableApplicationError("invalid AgentWorkflow input: "+err.Error(), "InvalidInput", nil)
	}
	a := newAgent(cfg)
	a.opts = opts
	info := workflow.GetInfo(ctx)
	if p := info.ParentWorkflowExecution; p != nil {
		a.parentID = p.ID
	}
	a.versions(ctx, in)
	if !a.tree {
		// Dependencies of older runs count every plan of their producer,
		// as they did when they were added.
		for _, id := range a.plans.PendingBindings() {
			a.plans.Bind(id, "")
		}
	}
	if a.tree {
		a.bus.rootID = info.WorkflowExecution.ID
		if r := info.RootWorkflowExecution; r != nil {
			a.bus.rootID = r.ID
		}
		a.bus.restore(cfg.in.Carry.tree())
		a.plans.Peers = a
	}
	if err := a.register(ctx); err != nil {
		return AgentResult{}, err
	}
	a.startReporters(ctx)
	a.publish(ctx)

	if a.durable {
		return a.loop(ctx)
	}
	for {
		if len(a.inbox) == 0 && a.todo.Paused && !a.ended {
			// A pause waits as long as it takes: the human may need a day
			// to fix what blocked the agent, so no idle timeout applies.
			a.status = StatusPaused
			a.publish(ctx)
			if err := workflow.Await(ctx, func() bool { return len(a.inbox) > 0 || a.ended }); err != nil {
				return AgentResult{}, err
			}
		}
		if len(a.inbox) == 0 {
			if a.cfg.subagent || a.ended {
				break
			}
			a.status = StatusWaitingUser
			a.publish(ctx)
			ok, err := workflow.AwaitWithTimeout(ctx, a.cfg.idleTimeout, func() bool { return len(a.inbox) > 0 || a.ended })
			if err != nil {
				return AgentResult{}, err
			}
			if !ok || len(a.inbox) == 0 {
				break // idle timeout or end_session
			}
		}
		next := a.inbox[0]
		a.inbox = a.inbox[1:]
		if err := a.turn(ctx, next); err != nil {
			a.status = StatusFailed
			a.publish(ctx)
			return AgentResult{}, err
		}
		if workflow.GetInfo(ctx).GetContinueAsNewSuggested() && len(a.inbox) == 0 && a.runningChildren() == 0 {
			// Hand over only at rest: every handler finished (a send_message
			// caller is waiting for the reply this run just produced), no
			// child running (its future belongs to this run), every event
			// reported and every signal delivered.
			if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) && a.reportersIdle() }); err != nil {
				return AgentResult{}, err
			}
			a.awaitSent(ctx)
			return AgentResult{}, workflow.NewContinueAsNewError(ctx, WorkflowName, a.carry())
		}
	}
	return a.finish(ctx)
}

// finish completes the run: it waits for the running subagents and records
// their final states, lets the reporters catch up (for a bounded time), and
// delivers its own last signals, so that nothing it owes anyone is lost.
func (a *agent) finish(ctx workflow.Context) (AgentResult, error) {
	if a.runningChildren() > 0 {
		a.status = StatusBlocked
		a.publish(ctx)
		if err := workflow.Await(ctx, func() bool { return a.runningChildren() == 0 }); err != nil {
			return AgentResult{}, err
		}
	}
	if !a.reportersIdle() {
		// Only then: an idle run must not start a timer, or the command
		// sequence of runs without reporters would change.
		idle, err := workflow.AwaitWithTimeout(ctx, drainTimeout, a.reportersIdle)
		if err != nil {
			return AgentResult{}, err
		}
		if !idle {
			a.abandonReports()
		}
	}
	a.status = StatusCompleted
	a.publish(ctx)
	final := a.state()
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return AgentResult{}, err
	}
	// A parent records a child's last events from its signals and its final
	// state from its result: the signals must be delivered first.
	a.awaitSent(ctx)
	return a.result(final), nil
}

// result is what a finished run returns, with its final state.
func (a *agent) result(final State) AgentResult {
	return AgentResult{
		AgentID:    a.cfg.agentID,
		Reply:      a.lastReply(),
		Turns:      a.turns,
		ModelCalls: a.modelCalls,
		Todos:      a.todo.List(),
		State:      &final,
	}
}

func newAgent(cfg config) *agent {
	a := &agent{
		cfg:          cfg,
		status:       StatusRunning,
		continuation: cfg.todo.Continuation,
		replies:      map[int]string{},
		plans:        todo.NewPlanState(cfg.agentID),
		children:     map[string]*child{},
		gone:         map[string]string{},
		reporters:    newReporters(cfg.in.Reporters),
		hostQueue:    cfg.in.WorkspaceHost,
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
		a.msgs = c.Messages
		a.todo = c.Todo
		a.turns, a.modelCalls = c.Turns, c.ModelCalls
		a.continuation = c.Continuation
		a.inbox = c.Inbox
		a.ended = c.Ended
		a.failedTurn, a.modelError, a.usage = c.FailedTurn, c.ModelError, c.Usage
		a.eventsPruned = c.EventsPruned
		a.remembered = c.Remembered
		// The carried messages are in this run's input already; its first
		// model call reads them by query rather than send them again.
		a.sentMsgs = len(a.msgs)
		return a
	}
	base := cfg.in.SystemPrompt
	if base == "" {
		base = todo.DefaultSystemPrompt
	}
	a.msgs = []model.Message{{Role: model.RoleSystem, Content: todo.SystemPrompt(base, cfg.todo), ToolCalls: []model.ToolCall{}}}
	if strings.TrimSpace(cfg.in.Prompt) != "" {
		a.inbox = append(a.inbox, Inbound{Text: cfg.in.Prompt})
	}
	return a
}

// carry is the input of the continuation: the same settings, with this
// run's state and its transcript compacted. Updates still waiting on a reply never cross the boundary
// (AgentWorkflow waits for all handlers first), so seqs restart safely.
func (a *agent) carry() AgentInput {
	in := a.cfg.in
	in.Prompt = ""
	// The continuation keeps the host of this run's workspace.
	in.WorkspaceHost = a.hostQueue
	msgs := a.msgs
	if a.durable {
		// The continuation starts from what the model sees now: the head,
		// the summary and the recent messages; the stored transcript of
		// this run stays readable in its history.
		msgs = nil
		for _, sp := range a.view(a.viewStart()) {
			msgs = append(msgs, a.msgs[sp.Start:sp.End]...)
		}
		a.eventsPruned += a.plans.Prune(carryEvents)
	}
	in.Carry = &Carry{
		Messages:     compact(msgs),
		Todo:         a.todo,
		Turns:        a.turns,
		ModelCalls:   a.modelCalls,
		Continuation: a.continuation,
		Inbox:        a.inbox,
		Ended:        a.ended,
		Plans:        a.plans,
		Subagents:    a.subagentStates(),
		FailedTurn:   a.failedTurn,
		ModelError:   a.modelError,
		Usage:        a.usage,
		EventsPruned: a.eventsPruned,
		Tree:         a.carryTree(),
		Remembered:   a.remembered,
	}
	return in
}

// register installs the queries, updates and signals.
func (a *agent) register(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, StateQuery, func() (State, error) { return a.state(), nil }); err != nil {
		return fmt.Errorf("register %s query: %w", StateQuery, err)
	}
	if err := workflow.SetQueryHandler(ctx, MessagesQuery, a.messagesQuery); err != nil {
		return fmt.Errorf("register %s query: %w", MessagesQuery, err)
	}
	if err := workflow.SetQueryHandler(ctx, activities.TranscriptQuery, a.transcriptPage); err != nil {
		return fmt.Errorf("register %s query: %w", activities.TranscriptQuery, err)
	}
	if err := workflow.SetQueryHandler(ctx, PlanQuery, func() (string, error) { return todo.PlanChecklist(a.plans.Current()), nil }); err != nil {
		return fmt.Errorf("register %s query: %w", PlanQuery, err)
	}
	err := workflow.SetUpdateHandlerWithOptions(ctx, SendMessageUpdate, a.onSendMessage, workflow.UpdateHandlerOptions{
		Validator: a.validateSendMessage,
	})
	if err != nil {
		return fmt.Errorf("register %s update: %w", SendMessageUpdate, err)
	}
	err = workflow.SetUpdateHandlerWithOptions(ctx, SetContinuationUpdate, a.onSetContinuation, workflow.UpdateHandlerOptions{
		Validator: validateSetContinuation,
	})
	if err != nil {
		return fmt.Errorf("register %s update: %w", SetContinuationUpdate, err)
	}
	err = workflow.SetUpdateHandlerWithOptions(ctx, ApprovePlanUpdate, a.onApproval, workflow.UpdateHandlerOptions{
		Validator: a.validateApproval,
	})
	if err != nil {
		return fmt.Errorf("register %s update: %w", ApprovePlanUpdate, err)
	}
	if a.durable {
		err = workflow.SetUpdateHandlerWithOptions(ctx, RetryTurnUpdate, a.onRetry, workflow.UpdateHandlerOptions{
			Validator: a.validateRetry,
		})
		if err != nil {
			return fmt.Errorf("register %s update: %w", RetryTurnUpdate, err)
		}
		err = workflow.SetUpdateHandlerWithOptions(ctx, ApproveToolUpdate, a.onToolApproval, workflow.UpdateHandlerOptions{
			Validator: a.validateToolApproval,
		})
		if err != nil {
			return fmt.Errorf("register %s update: %w", ApproveToolUpdate, err)
		}
		err = workflow.SetUpdateHandlerWithOptions(ctx, CompactContextUpdate, a.onCompact, workflow.UpdateHandlerOptions{
			Validator: a.validateCompact,
		})
		if err != nil {
			return fmt.Errorf("register %s update: %w", CompactContextUpdate, err)
		}
	}
	a.taskEvents = workflow.GetSignalChannel(ctx, TaskEventSignal)
	a.userCh = workflow.GetSignalChannel(ctx, UserMessageSignal)
	a.endCh = workflow.GetSignalChannel(ctx, EndSessionSignal)
	a.resumeCh = workflow.GetSignalChannel(ctx, ResumeSignal)
	if a.bufferedSignals {
		workflow.Go(ctx, a.pollSignals)
	} else {
		workflow.Go(ctx, a.receiveSignals)
	}
	return nil
}

// pollSignals takes in the signals for the life of the run. It waits on the
// channels' lengths, not in a receive: a coroutine blocked in a receive (or
// a selector) is handed a signal as it is delivered and holds it until it
// runs, after the main coroutine. Had the main coroutine, in that workflow
// task, completed or continued as new, the signal was lost; left in the
// buffer, it is taken by the main coroutine's own drainSignals.
func (a *agent) pollSignals(ctx workflow.Context) {
	// Await returns at once on a cancelled context, and signals still come
	// while a cancelled run winds down.
	wait, _ := workflow.NewDisconnectedContext(ctx)
	for {
		_ = workflow.Await(wait, func() bool {
			return a.userCh.Len()+a.resumeCh.Len()+a.taskEvents.Len()+a.endCh.Len() > 0
		})
		a.drainSignals(ctx)
	}
}

// receiveSignals drains the signal channels for the life of the run; runs
// started before the buffered-signals version keep it (see pollSignals).
func (a *agent) receiveSignals(ctx workflow.Context) {
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(a.userCh, func(c workflow.ReceiveChannel, _ bool) {
		var text string
		c.Receive(ctx, &text)
		a.onUserMessage(ctx, text)
	})
	sel.AddReceive(a.resumeCh, func(c workflow.ReceiveChannel, _ bool) {
		var args ResumeArgs
		c.Receive(ctx, &args)
		a.onResume(ctx, args)
	})
	sel.AddReceive(a.taskEvents, func(c workflow.ReceiveChannel, _ bool) {
		var te TaskEvent
		c.Receive(ctx, &te)
		a.onTaskEvent(ctx, te)
	})
	sel.AddReceive(a.endCh, func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, nil)
		a.ended = true
	})
	for {
		sel.Select(ctx)
	}
}

func (a *agent) validateSendMessage(text string) error {
	switch {
	case a.cfg.subagent:
		return errors.New("a subagent takes no user messages; talk to its parent")
	case a.ended:
		return errors.New("the session has ended")
	case strings.TrimSpace(text) == "":
		return errors.New("the message is empty")
	}
	return nil
}

func (a *agent) onSendMessage(ctx workflow.Context, text string) (string, error) {
	return a.enqueue(ctx, Inbound{Text: text})
}

// ContinuationArgs is the argument of the set_continuation update.
type ContinuationArgs struct {
	Enabled *bool `json:"enabled"`

	unknown string // strict.go
}

func validateSetContinuation(args ContinuationArgs) error {
	if args.unknown != "" {
		return unknownField(SetContinuationUpdate, args.unknown)
	}
	if args.Enabled == nil {
		return errors.New(`set_continuation takes {"enabled": true} or {"enabled": false}`)
	}
	return nil
}

func (a *agent) onSetContinuation(_ workflow.Context, args ContinuationArgs) (bool, error) {
	a.continuation = *args.Enabled
	return a.continuation, nil
}

// turn handles one user message: model calls and tools until the model
// answers without tool calls and the guards let the turn end, the model
// pauses, or the turn's model calls are spent.
func (a *agent) turn(ctx workflow.Context, m Inbound) error {
	if m.Retry {
		// The same user message again: its failure notice goes, so that
		// the model does not read it as its own answer.
		if n := len(a.msgs); n > 0 && a.msgs[n-1].Name == NameModelError {
			a.msgs = a.msgs[:n-1]
			if a.sentMsgs > n-1 {
				// A message the workers may have kept is gone: their
				// copies of this transcript are void.
				a.sentMsgs, a.epoch = n-1, a.epoch+1
			}
		}
	} else {
		a.turns++
	}
	todo.NewUserMessage(&a.todo)
	a.status = StatusRunning
	a.failedTurn = false
	if !m.Retry {
		a.append(model.Message{Role: model.RoleUser, Content: m.Text})
	}
	a.publish(ctx)

	reply := ""
	overflowed := false
	a.lastCall = false
	for calls := 0; ; calls++ {
		if calls >= a.cfg.maxTurns {
			reply = fmt.Sprintf("Stopped: this message used all %d model calls allowed per user message (max_turns). Send another message to continue.", a.cfg.maxTurns)
			a.append(model.Message{Role: model.RoleAssistant, Content: reply})
			todo.TurnEnded(&a.todo)
			break
		}
		if a.durable {
			if err := a.compactOnRequest(ctx); err != nil {
				return err
			}
		}
		resp, err := a.callModel(ctx)
		if err != nil && a.durable {
			err = a.recover(ctx, err, &overflowed)
			var tf *turnFailure
			if errors.As(err, &tf) {
				reply = tf.reply
				a.append(model.Message{Role: model.RoleAssistant, Name: NameModelError, Content: reply})
				a.failedTurn = true
				todo.TurnEnded(&a.todo)
				break
			}
			if err == nil {
				continue // compacted: call again
			}
		}
		if err != nil {
			return err
		}
		a.append(model.Message{Role: model.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls})
		if a.lastCall {
			// The guard gave up (todo_blocked): this answer ends the turn,
			// and a tool it calls anyway is answered, never run.
			for _, c := range resp.ToolCalls {
				a.append(model.Message{Role: model.RoleTool, ToolCallID: c.ID, IsError: true,
					Content: "Not run: the turn has ended (todo_blocked). Tell the user what is unfinished and why."})
			}
			a.lastCall = false
			reply = resp.Content
			break
		}
		if len(resp.ToolCalls) == 0 {
			a.settleUnknown(ctx, true)
			waited, err := a.waitBlocked(ctx)
			if err != nil {
				return err
			}
			if waited {
				continue // a step unblocked: the model hears of it and goes on
			}
			inj := todo.EndOfTurn(&a.todo, a.cfg.todo, a.continuation, a.plans.UnfinishedSteps())
			if inj.None() {
				reply = resp.Content
				break
			}
			a.inject(inj)
			a.lastCall = a.tree && inj.Name == todo.NameBlocked
			a.publish(ctx)
			continue
		}
		a.runTools(ctx, resp.ToolCalls)
		if a.todo.Paused {
			// A successful todo_pause ends the turn at once: no further
			// model call, no reminder.
			reply = "Paused: " + a.todo.PauseReason
			break
		}
		names := make([]string, len(resp.ToolCalls))
		for i, c := range resp.ToolCalls {
			names[i] = c.Name
		}
		if inj := todo.AfterTools(&a.todo, a.cfg.todo, names); !inj.None() {
			a.inject(inj)
		}
		a.publish(ctx)
	}
	if m.Seq != 0 {
		a.replies[m.Seq] = reply
	}
	return nil
}

// inject adds a guard's message to the transcript, where it stays: a reader
// of the run (or of a later window) sees why the model was prompted.
func (a *agent) inject(in todo.Inject) {
	a.append(model.Message{Role: model.RoleUser, Name: in.Name, Content: in.Text})
}

// window selects what the next model call receives: the model's view of
// the transcript (context.go) cut to context.max_messages. It first applies
// the context-loss rule: when no write_todos call and no todo_reminder is in
// view while the list is not empty, a todo_reminder with the list is added,
// so a windowed or compacted model never forgets its checklist.
func (a *agent) window() []activities.Span {
	isTool := func(i int) bool { return a.msgs[i].Role == model.RoleTool }
	start := func() int { return max(todo.Window(len(a.msgs), a.cfg.in.Context.MaxMessages, isTool), a.viewStart()) }
	from := start()
	wrote, reminded := false, false
	for _, sp := range a.view(from) {
		for _, m := range a.msgs[sp.Start:sp.End] {
			reminded = reminded || m.Name == todo.NameReminder
			for _, c := range m.ToolCalls {
				wrote = wrote || c.Name == todo.ToolWrite
			}
		}
	}
	if inj := todo.ContextReminder(&a.todo, a.cfg.todo, wrote, reminded); !inj.None() {
		a.inject(inj)
		from = start()
	}
	return a.view(from)
}

func (a *agent) append(m model.Message) {
	if m.ToolCalls == nil {
		m.ToolCalls = []model.ToolCall{}
	}
	a.msgs = append(a.msgs, m)
}

// lastReply is the content of the last assistant message without tool calls.
func (a *agent) lastReply() string {
	for i := len(a.msgs) - 1; i >= 0; i-- {
		if m := a.msgs[i]; m.Role == model.RoleAssistant && len(m.ToolCalls) == 0 {
			return m.Content
		}
	}
	return ""
}

// runTools answers every tool call of one response, in call order: the todo
// tools inside the workflow, the others as concurrent activities. Calls
// past todo.MaxToolCallsPerResponse are answered, not run: a response of
// thousands would schedule more activities than the server lets a run
// have pending, and the run would be stuck for good.
func (a *agent) runTools(ctx workflow.Context, calls []model.ToolCall) {
	if n := len(calls); n > todo.MaxToolCallsPerResponse {
		a.runSomeTools(ctx, calls[:todo.MaxToolCallsPerResponse])
		for _, c := range calls[todo.MaxToolCallsPerResponse:] {
			a.append(model.Message{Role: model.RoleTool, ToolCallID: c.ID, IsError: true, Content: todo.TooManyToolCalls(n)})
		}
		return
	}
	a.runSomeTools(ctx, calls)
}

// runSomeTools answers the tool calls that run of one response.
func (a *agent) runSomeTools(ctx workflow.Context, calls []model.ToolCall) {
	var results []*todo.Result
	if len(a.cfg.approval) > 0 {
		// Calls that need approval wait for it before any call of the
		// response runs; the refused ones are left out of the rest.
		results = a.approveTools(ctx, calls)
		var tcalls []todo.Call
		var at []int
		for i, c := range calls {
			if results[i] == nil {
				tcalls = append(tcalls, todo.Call{ID: c.ID, Name: c.Name, Args: c.Arguments})
				at = append(at, i)
			}
		}
		for j, r := range todo.Apply(&a.todo, tcalls, a.cfg.todo) {
			results[at[j]] = r
		}
	} else {
		tcalls := make([]todo.Call, len(calls))
		for i, c := range calls {
			tcalls[i] = todo.Call{ID: c.ID, Name: c.Name, Args: c.Arguments}
		}
		results = todo.Apply(&a.todo, tcalls, a.cfg.todo)
	}
	if a.tree && a.isRoot() {
		// Wants for the agents this response spawns wait for them rather
		// than being refused.
		for i, c := range calls {
			if c.Name == todo.ToolSpawnSubagent && results[i] == nil {
				var args SpawnArgs
				if json.Unmarshal(c.Arguments, &args) == nil && args.AgentID != "" {
					a.bus.pending = append(a.bus.pending, args.AgentID)
				}
			}
		}
		// Past the response, what waits for an agent not spawned is
		// settled when the turn ends (settleUnknown).
		defer func() { a.bus.pending = nil }()
	}

	futures := make([]workflow.Future, len(calls))
	info := workflow.GetInfo(ctx)
	workspaceOf := info.WorkflowExecution.ID
	if root := info.RootWorkflowExecution; root != nil {
		workspaceOf = root.ID // the agents of one tree share a workspace
	}
	// The tool activities run on the host of the workspace (host.go).
	var queue string
	var hostErr error
	for i, c := range calls {
		if results[i] == nil && !a.inWorkflow(c.Name) {
			queue, hostErr = a.toolQueue(ctx)
			break
		}
	}
	direct := queue != "" && a.direct
	tools := make([]toolCall, len(calls))
	for i, c := range calls {
		if results[i] != nil || a.inWorkflow(c.Name) {
			continue
		}
		if hostErr != nil {
			results[i] = &todo.Result{IsError: true, Content: fmt.Sprintf("Tool %s was not run: %v", c.Name, hostErr)}
			continue
		}
		tools[i] = toolCall{c: c, from: a.callRef(i, c), workspaceOf: workspaceOf, queue: queue, direct: direct}
		futures[i] = a.runTool(ctx, tools[i])
	}
	for i, c := range calls {
		msg := model.Message{Role: model.RoleTool, ToolCallID: c.ID}
		switch r := results[i]; {
		case r != nil:
			msg.Content, msg.IsError = r.Content, r.IsError
		case c.Name == todo.ToolSpawnSubagent && a.cfg.todo.Enabled:
			r := a.spawn(ctx, c)
			msg.Content, msg.IsError = r.Content, r.IsError
		case c.Name == todo.ToolCancelSubagent && a.tree && a.cfg.todo.Enabled:
			r := a.cancelSubagent(c)
			msg.Content, msg.IsError = r.Content, r.IsError
		case todo.IsPlanTool(c.Name) && a.cfg.todo.Enabled:
			r := a.planTool(ctx, c)
			msg.Content, msg.IsError = r.Content, r.IsError
		default:
			var out activities.RunToolResult
			err := futures[i].Get(ctx, &out)
			if direct && notRun(err) {
				// Refused by a worker that is not the host, or taken by
				// none: nothing ran. The host's queue takes it, and this
				// run's later calls.
				a.direct = false
				again := tools[i]
				again.direct = false
				err = a.runTool(ctx, again).Get(ctx, &out)
			}
			gone := queue != "" && a.hostAnswered(ctx, err)
			switch {
			case gone:
				msg.Content, msg.IsError = a.hostGone(c.Name), true
			case err != nil:
				msg.Content, msg.IsError = fmt.Sprintf("Tool %s failed: %v", c.Name, rootMessage(err)), true
			default:
				msg.Content, msg.IsError = out.Content, out.IsError
			}
		}
		r := todo.Result{Content: msg.Content, IsError: msg.IsError}
		todo.NoteResult(&a.todo, a.cfg.todo, c.Name, c.Arguments, &r)
		msg.Content = r.Content
		a.append(msg)
	}
}

// callRef locates call i of the model's answer just appended, for RunTool
// to read it from the transcript, with its digest, against which a worker
// checks the copy in its cache.
func (a *agent) callRef(i int, c model.ToolCall) *activities.CallRef {
	return &activities.CallRef{Message: len(a.msgs) - 1, Index: i, Digest: activities.CallDigest(c)}
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

// publish makes the state visible: search attributes for the run list (only
// when they changed, so history does not grow idle), current details for the
// run's page in the Web UI.
//
// A lean run (folded-versions 2) upserts less, without ever leaving the run
// list wrong while the run waits:
//   - it does not upsert at its start when it was started with search
//     attributes (StartSearchAttributes, which the starters and a parent
//     set, or what a continued run inherits);
//   - while it is busy (status running), it upserts at most once every
//     publishEvery: a change within that time is sent with the next publish
//     after it, at the next step. Any other status means the run now waits
//     (for its user, an approval, a subagent) or has ended, and is sent at
//     once, with the counters of that moment. So the run list trails a busy
//     run by at most one step, and only when its steps come faster than one a
//     second, as a scripted or cached model's do; the run's page (current
//     details) and the state query never trail.
func (a *agent) publish(ctx workflow.Context) {
	items := a.todo.List()
	p := published{
		total:     int64(len(items)),
		completed: int64(todo.CountStatus(items, todo.Completed)),
		status:    a.status,
		set:       true,
	}
	if cur, ok := todo.Current(items); ok && !a.opts.Encrypted {
		p.current = cutUTF8(cur.Content, 200)
	}
	if a.tree {
		p.status = a.shownStatus()
		a.sendBrief(ctx)
	}
	now := workflow.Now(ctx)
	switch {
	case p.same(a.published):
	case a.lean && !a.published.set && startedWith(ctx).set:
		// The run's first publish. The list shows what the run started
		// with until the state it goes on in is published, before it
		// waits: a continued run does so in this same workflow task
		// (agent.loop), so the "running" of its start is never sent.
		a.published = startedWith(ctx)
		if p.same(a.published) {
			a.published.at = now
		}
	case a.lean && a.published.set && p.status == StatusRunning && now.Sub(a.published.at) < publishEvery:
		// Busy: sent at a later step, or with the status the run waits in.
	default:
		err := workflow.UpsertTypedSearchAttributes(ctx,
			TodoTotalKey.ValueSet(p.total),
			TodoCompletedKey.ValueSet(p.completed),
			TodoCurrentKey.ValueSet(p.current),
			AgentStatusKey.ValueSet(p.status),
		)
		if err != nil {
			workflow.GetLogger(ctx).Warn("search attributes not updated", "error", err)
		}
		a.published, a.published.at = p, now
	}
	workflow.SetCurrentDetails(ctx, a.details())
}

// same reports whether p and q hold the same search attributes.
func (p published) same(q published) bool {
	p.at, q.at = time.Time{}, time.Time{}
	return p == q
}

// todoTools names the workflow's own tools for a model call; none when the
// todo list is disabled.
func (a *agent) todoTools() *activities.TodoTools {
	if !a.cfg.todo.Enabled {
		return nil
	}
	return &activities.TodoTools{WriteDescription: a.cfg.todo.ToolDescription}
}

// inWorkflow reports whether a tool runs as workflow code rather than as an
// activity: the todo, plan and subagent tools only change workflow state.
func (a *agent) inWorkflow(name string) bool {
	return a.cfg.todo.Enabled && (todo.IsTool(name) || todo.IsPlanTool(name) || name == todo.ToolSpawnSubagent ||
		(a.tree && name == todo.ToolCancelSubagent))
}

// details is the markdown the Web UI shows on the run's page.
func (a *agent) details() string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s**: %s, turn %d, %d model calls\n\n", a.cfg.agentID, a.status, a.turns, a.modelCalls)
	b.WriteString(todo.Checklist(a.todo.List()))
	if a.todo.Paused {
		fmt.Fprintf(&b, "\n\nPaused: %s", a.todo.PauseReason)
	}
	if p := a.plans.Current(); p != nil {
		b.WriteString("\n\n```\n" + todo.PlanChecklist(p) + "\n```")
	}
	subs := a.subagentStates()
	for _, id := range a.childOrder {
		st := subs[id]
		done, total := todo.CountStatus(st.Todos, todo.Completed), len(st.Todos)
		if st.Live != nil {
			done, total = st.Live.TodosCompleted, st.Live.TodosTotal
		}
		fmt.Fprintf(&b, "\n\nsubagent **%s**: %s, %d/%d todos done", id, st.Status, done, total)
	}
	if a.tree {
		for _, w := range a.waiting() {
			if w.AgentID != a.cfg.agentID {
				fmt.Fprintf(&b, "\n\n**waiting**: agent %s (%s): %s", w.AgentID, w.Kind, w.Reason)
			}
		}
	}
	if a.hostQueue != "" {
		fmt.Fprintf(&b, "\n\nworkspace host: `%s`", a.hostQueue)
		if a.hostSilent != nil {
			fmt.Fprintf(&b, ", **not answering** since %s: tool calls fail until it is back", a.hostSilent.UTC().Format(time.RFC3339))
		}
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
