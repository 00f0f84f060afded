package workflows

// The run's updates and signals: registered once, validated before
// anything is recorded, and taken in by the signal coroutine.

import (
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/todo"
)

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
	if err := workflow.SetQueryHandler(ctx, ToolDiffsQuery, a.diffs.answer); err != nil {
		return fmt.Errorf("register %s query: %w", ToolDiffsQuery, err)
	}
	if err := workflow.SetQueryHandler(ctx, PlanQuery, func() (string, error) { return todo.PlanChecklist(a.plans.Current()), nil }); err != nil {
		return fmt.Errorf("register %s query: %w", PlanQuery, err)
	}
	// Every update has a validator, which refuses a message before
	// anything of it is recorded.
	for _, u := range []struct {
		name               string
		handler, validator any
	}{
		{SendMessageUpdate, a.onSendMessage, a.validateSendMessage},
		{SetContinuationUpdate, a.onSetContinuation, validateSetContinuation},
		{ApprovePlanUpdate, a.onApproval, a.validateApproval},
		{RetryTurnUpdate, a.onRetry, a.validateRetry},
		{ApproveToolUpdate, a.onToolApproval, a.validateToolApproval},
		{CompactContextUpdate, a.onCompact, a.validateCompact},
		{InterruptUpdate, a.onInterrupt, a.validateInterrupt},
		{TurnReplyUpdate, a.inbox.onTurnReply, a.inbox.validateTurnReply},
	} {
		err := workflow.SetUpdateHandlerWithOptions(ctx, u.name, u.handler, workflow.UpdateHandlerOptions{Validator: u.validator})
		if err != nil {
			return fmt.Errorf("register %s update: %w", u.name, err)
		}
	}
	a.tree.join = workflow.GetSignalChannel(ctx, JoinSignal)
	a.tree.want = workflow.GetSignalChannel(ctx, WantSignal)
	a.tree.events = workflow.GetSignalChannel(ctx, TaskEventSignal)
	a.tree.end = workflow.GetSignalChannel(ctx, EndSignal)
	a.tree.hand = workflow.GetSignalChannel(ctx, HandSignal)
	a.userCh = workflow.GetSignalChannel(ctx, UserMessageSignal)
	a.endCh = workflow.GetSignalChannel(ctx, EndSessionSignal)
	a.resumeCh = workflow.GetSignalChannel(ctx, ResumeSignal)
	workflow.Go(ctx, a.pollSignals)
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
			return a.userCh.Len()+a.resumeCh.Len()+a.treeLen()+a.endCh.Len() > 0
		})
		a.drainSignals(ctx)
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
	case len(text) > todo.MaxMessageBytes:
		return fmt.Errorf("the message is %d bytes: at most %d are taken; put longer material in a file the agent reads", len(text), todo.MaxMessageBytes)
	case a.inbox.queuedBytes()+len(text) > todo.MaxQueuedBytes:
		return fmt.Errorf("%d messages (%d bytes) already wait for their turn, and at most %d bytes may: send this one after the agent answers", len(a.inbox.queue), a.inbox.queuedBytes(), todo.MaxQueuedBytes)
	}
	return nil
}

func (a *agent) onSendMessage(ctx workflow.Context, text string) (string, error) {
	return a.inbox.enqueue(ctx, Inbound{Text: text})
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
