package workflows

// The run's updates and signals: registered once, validated before
// anything is recorded, and taken in by the signal coroutine.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/todo"
)

// register installs the queries, updates and signals.
func (a *agent) register(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, api.StateQuery, func() (api.State, error) { return a.state(), nil }); err != nil {
		return fmt.Errorf("register %s query: %w", api.StateQuery, err)
	}
	if err := workflow.SetQueryHandler(ctx, api.MessagesQuery, a.messagesQuery); err != nil {
		return fmt.Errorf("register %s query: %w", api.MessagesQuery, err)
	}
	if err := workflow.SetQueryHandler(ctx, api.ToolDiffsQuery, a.diffs.answer); err != nil {
		return fmt.Errorf("register %s query: %w", api.ToolDiffsQuery, err)
	}
	if err := workflow.SetQueryHandler(ctx, api.PlanQuery, func() (string, error) { return todo.PlanChecklist(a.plans.Current()), nil }); err != nil {
		return fmt.Errorf("register %s query: %w", api.PlanQuery, err)
	}
	// Every update has a validator, which refuses a message before
	// anything of it is recorded.
	for _, u := range []struct {
		name               string
		handler, validator any
	}{
		{api.SendMessageUpdate, a.onSendMessage, a.validateSendMessage},
		{api.SetContinuationUpdate, a.onSetContinuation, validateSetContinuation},
		{api.ApprovePlanUpdate, a.onApproval, a.validateApproval},
		{api.RetryTurnUpdate, a.onRetry, a.validateRetry},
		{api.ApproveToolUpdate, a.onToolApproval, a.validateToolApproval},
		{api.CompactContextUpdate, a.onCompact, a.validateCompact},
		{api.InterruptUpdate, a.onInterrupt, a.validateInterrupt},
		{api.TurnReplyUpdate, a.inbox.onTurnReply, a.inbox.validateTurnReply},
	} {
		err := workflow.SetUpdateHandlerWithOptions(ctx, u.name, u.handler, workflow.UpdateHandlerOptions{Validator: u.validator})
		if err != nil {
			return fmt.Errorf("register %s update: %w", u.name, err)
		}
	}
	a.tree.join = workflow.GetSignalChannel(ctx, JoinSignal)
	a.tree.want = workflow.GetSignalChannel(ctx, WantSignal)
	a.tree.events = workflow.GetSignalChannel(ctx, api.TaskEventSignal)
	a.tree.end = workflow.GetSignalChannel(ctx, EndSignal)
	a.tree.hand = workflow.GetSignalChannel(ctx, HandSignal)
	a.userCh = workflow.GetSignalChannel(ctx, api.UserMessageSignal)
	a.endCh = workflow.GetSignalChannel(ctx, api.EndSessionSignal)
	a.resumeCh = workflow.GetSignalChannel(ctx, api.ResumeSignal)
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
	case a.cfg.Subagent:
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
	a.window.heard.Text(text)
	return a.inbox.enqueue(ctx, Inbound{Text: text})
}

func validateSetContinuation(args api.ContinuationArgs) error {
	if err := args.UnknownField(); err != nil {
		return err
	}
	if args.Enabled == nil {
		return errors.New(`set_continuation takes {"enabled": true} or {"enabled": false}`)
	}
	return nil
}

func (a *agent) onSetContinuation(_ workflow.Context, args api.ContinuationArgs) (bool, error) {
	a.continuation = *args.Enabled
	return a.continuation, nil
}
