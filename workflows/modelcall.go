package workflows

import (
	"cmp"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
	"github.com/todoflow/todoflow/transcript"
)

// A model call is one CallModel activity, whose passing faults the server
// retries for the run's model_retry_window_s (docs/architecture.md, "A
// model outage"): a retry adds nothing to history, and a handover has no
// loop of attempts to reach into. The run learns of a failure once the
// server gives up, and ends the turn with it.
const (
	// maxModelBackoff caps the wait between two attempts, so that the run
	// notices a provider that came back within minutes.
	maxModelBackoff   = 5 * time.Minute
	firstModelBackoff = time.Second
)

// errContextOverflow says the request did not fit the model's context: the
// loop compacts and calls again rather than wait.
var errContextOverflow = errors.New("the request does not fit the model's context window")

// turnFailure ends a turn, not the run: the reply tells the user what failed
// and what to do, and the session keeps its list and plan.
type turnFailure struct{ reply string }

func (f *turnFailure) Error() string { return f.reply }

// Activity options. Model calls heartbeat, so a call on a dead worker is
// noticed within seconds; tools are retried a few times only, because a tool
// with side effects should not run many times unasked.
var (
	// modelActivity is retried for the run's retry window (execModel sets
	// ScheduleToClose), but for the errors waiting would not fix, which the
	// policy names besides the activity marking them non-retryable.
	modelActivity = workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute,
		HeartbeatTimeout:    5 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    firstModelBackoff,
			BackoffCoefficient: 2,
			MaximumInterval:    maxModelBackoff,
			NonRetryableErrorTypes: []string{
				activities.ErrTypeContextOverflow, activities.ErrTypeModelConfig, transcript.ErrTypeMismatch, transcript.ErrTypeHole,
			},
		},
	}
	toolActivity = workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute,
		HeartbeatTimeout:    5 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    30 * time.Second,
			MaximumAttempts:    3,
		},
	}
)

// callModel asks the model for the next step of the turn, with the
// transcript window and the todo tools.
func (a *agent) callModel(ctx workflow.Context) (model.Response, error) {
	for _, ev := range a.plans.TakeNotifications() {
		a.append(model.Message{Role: model.RoleUser, Name: api.NameTaskEvent, Content: todo.NotificationText(ev)})
	}
	if a.tree.finishNote != "" {
		a.append(model.Message{Role: model.RoleUser, Name: api.NameTaskEvent, Content: a.tree.finishNote})
		a.tree.finishNote = ""
	}
	spans, err := a.fit(ctx, a.requestSpans())
	if err != nil {
		return model.Response{}, err
	}
	a.window.sentTokens = a.spanTokens(spans)
	in := a.modelInput(ctx, spans, false)
	in.TodoTools, in.WorkerTools = a.todoTools(), a.cfg.in.Tools
	if a.cur != nil && a.cur.at.LastCall {
		in.TodoTools, in.WorkerTools = nil, []string{}
	}
	return a.execModel(ctx, in, a.callSummary(), untilWindow)
}

// modelInput is the next model call's input, numbered: it reads spans of
// this run's transcript and offers no tools until the caller adds them.
// A summarising call (summary) is counted, but not numbered among the
// agent's own calls: the scripted model answers call N with its response N,
// and a scenario must not depend on when the context is compacted.
func (a *agent) modelInput(ctx workflow.Context, spans []transcript.Span, summary bool) activities.CallModelInput {
	a.modelCalls++
	if summary {
		a.window.summaryCalls++
	}
	info := workflow.GetInfo(ctx)
	in := activities.CallModelInput{
		WorkflowID:  info.WorkflowExecution.ID,
		RunID:       info.WorkflowExecution.RunID,
		AgentID:     a.cfg.AgentID,
		Model:       a.cfg.in.Model,
		ModelChosen: a.cfg.in.ModelChosen,
		Turn:        a.turns,
		Call:        a.modelCalls - a.window.summaryCalls,
		Spans:       spans,
		WorkerTools: []string{},
		New:         transcript.NewMessagesOf(a.window.msgs, a.window.sentMsgs, a.window.epoch),
	}
	if a.window.carriedUnsent {
		in.New.Carried = transcript.MessageDigests(a.window.msgs[:a.window.sentMsgs])
		a.window.carriedUnsent = false
	}
	if a.window.wholeDue {
		in.New.Whole(a.window.msgs, a.window.wholeAt)
		a.window.wholeDue = false
	}
	a.recordMade(ctx, in.New)
	a.window.sentMsgs = len(a.window.msgs)
	return in
}

// recordMade records, one marker each, the fields nm leaves out that the
// workflow made itself (transcript.NewMessages.Unheard): no other event
// holds them, and a reader finds them there by digest. Its patch is asked
// for here, where a run first needs it. A run that did not take the patch
// sends them whole instead, up to the budget of one input; past it, the
// call fails for the message (holeAt), which the next call sends.
func (a *agent) recordMade(ctx workflow.Context, nm *transcript.NewMessages) {
	at, made := nm.Unheard(a.window.msgs, a.window.heard)
	if a.inbox.empty() {
		a.window.heard = nil
	}
	if len(made) == 0 {
		return
	}
	if !patched(ctx, patchRecordMade) {
		room := transcript.Budget
		for k, i := range at {
			if room -= len(made[k]); room < 0 {
				break
			}
			nm.Whole(a.window.msgs, i)
		}
		return
	}
	for _, v := range made {
		workflow.SideEffect(ctx, func(workflow.Context) any { return v })
	}
}

// callSummary is how the current model call reads in the Web UI.
func (a *agent) callSummary() string {
	return fmt.Sprintf("%s: %s, turn %d, call %d", a.cfg.AgentID, modelLabel(a.cfg.in.Model), a.turns, a.modelCalls)
}

// patience is how long a model call may be retried.
type patience int

const (
	// untilWindow retries the call's passing faults for the run's model
	// retry window.
	untilWindow patience = iota
	// oneAttempt makes one attempt: the summary written before a handover,
	// which goes on without it rather than wait for a model that is down.
	oneAttempt
)

// execModel runs one model call, retried as p allows. Its input is in
// history once, however many attempts the server makes.
func (a *agent) execModel(ctx workflow.Context, in activities.CallModelInput, summary string, p patience) (model.Response, error) {
	if a.stopping() {
		return model.Response{}, errInterrupted // no call after an interrupt
	}
	// An interrupt cancels the call, the server's waits between its
	// attempts included.
	cctx, cancel := workflow.WithCancel(ctx)
	if cur := a.cur; cur != nil {
		cur.cancel = cancel
		defer func() { cur.cancel = nil }()
	}
	defer cancel()
	opts := withSummary(modelActivity, summary)
	// The window bounds the retries, not a healthy attempt: one shorter
	// than an attempt's StartToClose (a test's, a subagent's that must
	// time out first) would cut a slow answer that was coming.
	opts.ScheduleToCloseTimeout = max(a.cfg.ModelRetryWindow, opts.StartToCloseTimeout)
	if p == oneAttempt {
		policy := *opts.RetryPolicy
		policy.MaximumAttempts = 1
		opts.RetryPolicy = &policy
	}
	// An interrupted call answers with the reply it had written
	// (interrupt.go). A client-side option: the commands are the same.
	opts.WaitForCancellation = true
	since := workflow.Now(ctx)
	var resp model.Response
	err := a.awaitCall(ctx, workflow.ExecuteActivity(workflow.WithActivityOptions(cctx, opts), api.ModelCallActivity, in), &resp)
	switch {
	case a.stopping() && ctx.Err() == nil && a.keepsCut(ctx):
		a.keepCutReply(ctx, resp, err)
		return model.Response{}, errInterrupted
	case err == nil:
		a.window.heard.Answer(resp.Content, resp.ToolCalls)
		if a.modelError != nil {
			a.modelError = nil
			a.publish(ctx)
		}
		addUsage(&a.usage, resp.Usage)
		a.served = cmp.Or(resp.Model, a.served)
		return resp, nil
	case a.stopping() && ctx.Err() == nil:
		return model.Response{}, errInterrupted
	case temporal.IsCanceledError(err) || ctx.Err() != nil:
		return model.Response{}, err // the run itself is being cancelled
	case isOverflow(err):
		a.modelError = nil
		return model.Response{}, fmt.Errorf("%w: %s", errContextOverflow, api.ModelErrorText(err))
	case p == oneAttempt:
		// Not a turn's failure: the caller goes on without the answer.
		return model.Response{}, fmt.Errorf("one attempt at a model call: %s", api.ModelErrorText(err))
	}
	// The server gave up: the error was not one to retry, or the retry
	// window ran out (the last attempt's failure, or a timeout whose cause
	// is that failure).
	if at, ok := holeAt(err); ok {
		a.window.resendWhole(at) // the turn fails; the next call has it
	}
	retryable := !isPermanent(err)
	a.modelError = &api.ModelError{Message: api.ModelErrorText(err), Attempts: activities.FailedAttempt(err), Since: since}
	workflow.GetLogger(ctx).Warn("model call failed; the turn ends", "attempts", a.modelError.Attempts, "error", a.modelError.Message)
	a.publish(ctx)
	return model.Response{}, &turnFailure{reply: a.failureReply(ctx, workflow.Now(ctx).Sub(since), retryable)}
}

// isOverflow says the model refused the request as too long for its
// context.
func isOverflow(err error) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.Type() == activities.ErrTypeContextOverflow
}

// holeAt is the message a call failed for want of (transcript.ErrTypeHole).
func holeAt(err error) (int, bool) {
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != transcript.ErrTypeHole {
		return 0, false
	}
	var at int
	if err := app.Details(&at); err != nil {
		return 0, false
	}
	return at, true
}

// isPermanent says the call failed with an error that waiting would not
// fix (a refused request, a bad key), not a passing fault the retry window
// ran out on.
func isPermanent(err error) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.NonRetryable()
}

// maxOverflows is how many times a turn compacts after the provider refused
// a request as too long; each time the run learned a lower limit.
const maxOverflows = 3

// failureReply is the reply of a turn that failed on the model: what failed
// and what the user can do, in the words they will see first.
func (a *agent) failureReply(ctx workflow.Context, waited time.Duration, retryable bool) string {
	me := a.modelError
	id := workflow.GetInfo(ctx).WorkflowExecution.ID
	if retryable {
		tries := "model_retry_window_s"
		if me.Attempts > 0 {
			tries = fmt.Sprintf("%d attempts, %s", me.Attempts, tries)
		}
		return fmt.Sprintf("The model could not be reached for %s (%s): %s. "+
			"The list and plan are kept; send a message, or run `starter retry %s` once the model is back.",
			waited.Round(time.Second), tries, me.Message, id)
	}
	return fmt.Sprintf("The model call failed: %s. The list and plan are kept; fix the cause, then run `starter retry %s` "+
		"(update %s) to run this turn again, or send a new message.", me.Message, id, api.RetryTurnUpdate)
}

// modelLabel is how a model reference reads in the Web UI's activity list:
// a scenario file by its name, not its whole path on the worker.
func modelLabel(ref string) string {
	if ref == "" {
		return "default model"
	}
	if p, ok := strings.CutPrefix(ref, "script:"); ok {
		return "script:" + path.Base(p)
	}
	return ref
}

func plusUsage(u, o api.Usage) api.Usage {
	return api.Usage{PromptTokens: u.PromptTokens + o.PromptTokens, CompletionTokens: u.CompletionTokens + o.CompletionTokens, TotalTokens: u.TotalTokens + o.TotalTokens}
}

// treeUsage is what this agent and every agent under it used: a running
// child's as of its latest report (an event or a change of status), a
// finished one's from its final state.
func (a *agent) treeUsage() api.Usage {
	u := a.usage
	for _, id := range a.tree.childOrder {
		ch := a.tree.children[id]
		switch {
		case !ch.Done && a.tree.briefs[id] != nil:
			u = plusUsage(u, usageOr(a.tree.briefs[id].TreeUsage, a.tree.briefs[id].Usage))
		case ch.State != nil:
			u = plusUsage(u, usageOr(ch.State.TreeUsage, ch.State.Usage))
		}
	}
	return u
}

// usageOr is u, or own when u was never set (a state of an older run, which
// counted its own usage only).
func usageOr(u, own api.Usage) api.Usage {
	if u == (api.Usage{}) {
		return own
	}
	return u
}

// addUsage adds a model call's usage to u.
func addUsage(u *api.Usage, m model.Usage) {
	u.PromptTokens += m.PromptTokens
	u.CompletionTokens += m.CompletionTokens
	u.TotalTokens += m.PromptTokens + m.CompletionTokens
}

// recover decides what a failed model call means for the turn: a request
// too long for the model teaches the run the provider's limit, and is
// compacted to it and called again (maxOverflows times a turn); a failure
// that ended the turn stays one; and a subagent, which has no user to retry
// its turn, fails its run so that its parent sees it.
func (a *agent) recover(ctx workflow.Context, err error, overflows *int) error {
	if errors.Is(err, errContextOverflow) {
		if limit := todo.ContextLimit(err.Error(), a.window.sentTokens); limit > 0 && (a.window.contextLimit == 0 || limit < a.window.contextLimit) {
			a.window.contextLimit = max(limit, api.MinContextTokens)
		}
		var cerr error
		if *overflows < maxOverflows {
			*overflows++
			if _, cerr = a.compact(ctx); cerr == nil {
				return nil
			}
		}
		var tf *turnFailure
		if cerr != nil && errors.As(cerr, &tf) {
			err = cerr
		} else {
			a.modelError = &api.ModelError{Message: "the conversation does not fit the model's context window, even after compaction",
				Attempts: 1, Since: workflow.Now(ctx)}
			err = &turnFailure{reply: "The model call failed: the latest messages alone do not fit the model's context window. " +
				"The list and plan are kept; send a shorter message, or lower context.max_tokens and start a new session."}
		}
	}
	var tf *turnFailure
	if errors.As(err, &tf) && a.cfg.Subagent {
		msg := tf.reply
		if a.modelError != nil {
			msg = "model call failed: " + a.modelError.Message
		}
		return temporal.NewNonRetryableApplicationError(msg, activities.ErrTypeModel, nil)
	}
	return err
}
