package workflows

// One turn: model calls and the guards' decisions until the turn ends.

import (
	"errors"
	"fmt"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
	"github.com/todoflow/todoflow/transcript"
)

// BlockedTurn is where a turn handed over stood: the model calls it had
// made (max_turns counts on), and what it waits for: blocked steps (no
// field set), its plan's approval, its tool calls' approval, or nothing
// (Next: it goes on at its next model call).
type BlockedTurn struct {
	Calls    int  `json:"calls"`
	Approval bool `json:"approval,omitempty"`
	// Tools: the turn's last response waits for its calls' approval; none
	// of its calls has run. Verdicts are the answers some already had.
	Tools    bool          `json:"tools,omitempty"`
	Verdicts []CallVerdict `json:"verdicts,omitempty"`
	// Held: the calls the worker held (their tools may destroy) whose
	// approval waits were handed over, in call order; the response's
	// other calls have their answers in the transcript. With Approval,
	// the plan's wait comes after them.
	Held []string `json:"held,omitempty"`
	// Next: the turn was handed over between two steps (a busy turn
	// whose history grew past the server's suggestion): the continuation
	// calls the model, with no tools offered when LastCall says the
	// guard's escalation spent the turn.
	Next     bool `json:"next,omitempty"`
	LastCall bool `json:"last_call,omitempty"`
	// Resume is a resume signal that came while the turn ran, before the
	// pause it answers was recorded; the loop takes it when the turn ends.
	Resume *string `json:"resume,omitempty"`
}

// turnCursor is the turn running now (a.cur): whom it answers, where it
// stands (the BlockedTurn a handover carries, written as the turn goes),
// and whether the user stopped it. A new kind of wait adds a field to
// BlockedTurn, set where the wait is handed over and read in startTurn.
type turnCursor struct {
	in Inbound
	// at is where the turn stands. While a response is answered, its
	// fields say which of the response's waits were handed over: Tools
	// (none of its calls ran; Verdicts are the answers so far), Held (the
	// held calls asked again in the continuation), Approval (the plan's).
	at     BlockedTurn
	stop   bool                // the user interrupted the turn (interrupt.go)
	cancel workflow.CancelFunc // cancels the model call in flight
	cut    string              // the reply the interrupted call had written (interrupt.go)
}

// carried is the turn as a handover carries it, first in the inbox.
func (c *turnCursor) carried() Inbound {
	at := c.at
	return Inbound{Seq: c.in.Seq, ReplyTo: c.in.ReplyTo, Blocked: &at}
}

// source says where a round of the turn takes its response from.
type source int

const (
	fromModel   source = iota // the model's next answer
	fromHeld                  // a handed-over response whose held calls are asked again
	fromPending               // a handed-over response whose calls wait for approval
	fromLast                  // the last answer again: a turn handed over on blocked steps
)

// turn handles one user message: model calls and tools until the model
// answers without tool calls and the guards let the turn end, the model
// pauses, or the turn's model calls are spent. errHandOver says the turn
// was handed over where it stood (the returned cursor); a resume that came
// while it ran is the cursor's too.
func (a *agent) turn(ctx workflow.Context, m Inbound) (*turnCursor, error) {
	cur, src, err := a.startTurn(ctx, m)
	defer func() { a.cur = nil }()
	if err != nil {
		return cur, err
	}
	reply := ""
	overflows := 0
	for ; ; cur.at.Calls++ {
		if cur.stop {
			reply = a.endInterrupted()
			break
		}
		resp, answered, end, err := a.response(ctx, cur, src, &overflows)
		src = fromModel
		if err != nil {
			return cur, err
		}
		if end {
			reply = resp.Content
			break
		}
		if resp == nil {
			continue // the model is called again
		}
		if len(resp.ToolCalls) == 0 {
			r, end, err := a.answered(ctx, cur, resp.Content)
			if err != nil {
				return cur, err
			}
			if end {
				reply = r
				break
			}
			continue
		}
		if !answered {
			a.runTools(ctx, resp.ToolCalls)
		}
		end, err = a.afterTools(ctx, cur, *resp)
		if err != nil {
			return cur, err
		}
		if end {
			reply = "Paused: " + a.todo.PauseReason
			break
		}
	}
	a.inbox.replied(m, reply)
	return cur, nil
}

// startTurn begins the turn of m: a new message, a retry of the failed
// turn, or a turn handed over, which goes on from its cursor. It returns
// the cursor and where the first round's response comes from.
func (a *agent) startTurn(ctx workflow.Context, m Inbound) (*turnCursor, source, error) {
	cur := &turnCursor{in: m}
	a.cur = cur
	b := m.Blocked
	switch {
	case b != nil:
		// The turn the run before handed over: it goes on where it
		// stood, with its model calls counted.
		cur.at = BlockedTurn{Calls: b.Calls, Resume: b.Resume}
	case m.Retry:
		// The same user message again: its failure notice goes, so that
		// the model does not read it as its own answer.
		if n := len(a.window.msgs); n > 0 && a.window.msgs[n-1].Name == api.NameModelError {
			a.window.msgs = a.window.msgs[:n-1]
			if a.window.sentMsgs > n-1 {
				// A message the workers may have kept is gone: their
				// copies of this transcript are void.
				a.window.sentMsgs, a.window.epoch = n-1, a.window.epoch+1
			}
		}
	default:
		a.turns++
	}
	if b == nil {
		todo.NewUserMessage(&a.todo)
	}
	a.status = api.StatusRunning
	a.failedTurn = false
	if !m.Retry && b == nil {
		a.append(model.Message{Role: model.RoleUser, Content: m.Text})
	}
	a.publish(ctx)
	switch {
	case b == nil:
		return cur, fromModel, nil
	case len(b.Held) > 0:
		// The held calls of its response are asked again; a plan's wait
		// handed over with them comes after them.
		cur.at.Held, cur.at.Approval = b.Held, b.Approval
		return cur, fromHeld, nil
	case b.Approval:
		return cur, fromModel, a.awaitHandedApproval(ctx, cur, b.Calls)
	case b.Tools:
		// The response whose calls waited for approval is answered first,
		// with the verdicts its calls already had.
		cur.at.Verdicts = b.Verdicts
		return cur, fromPending, nil
	case b.Next:
		cur.at.LastCall = b.LastCall
		return cur, fromModel, nil
	}
	return cur, fromLast, nil // on blocked steps: the last answer again
}

// response is the response a round of the turn answers, from src: nil
// when the model is to be called again at once; answered when its calls
// have their answers already (held calls asked again); end when it ends
// the turn, its content the reply.
func (a *agent) response(ctx workflow.Context, cur *turnCursor, src source, overflows *int) (resp *model.Response, answered, end bool, err error) {
	switch src {
	case fromHeld:
		held := cur.at.Held
		cur.at.Held = nil
		r := a.answerHeld(ctx, held)
		if len(cur.at.Held) == 0 && cur.at.Approval {
			cur.at.Approval = false
			if err := a.awaitHandedApproval(ctx, cur, cur.at.Calls+1); err != nil {
				return nil, false, false, err
			}
		}
		return r, r != nil, false, nil
	case fromPending:
		if calls := a.lastCalls(ctx); calls != nil {
			return &model.Response{ToolCalls: calls}, false, false, nil
		}
		return nil, false, false, nil
	case fromLast:
		return &model.Response{Content: a.lastReply()}, false, false, nil
	}
	if cur.at.Calls > cur.in.blockedCalls() && a.handOverDue(ctx) {
		// A busy turn (many calls, large results) hands over between two
		// steps, where all it knows is in the transcript: it goes on at
		// this model call.
		cur.at = BlockedTurn{Calls: cur.at.Calls, Next: true, LastCall: cur.at.LastCall, Resume: cur.at.Resume}
		return nil, false, false, errHandOver
	}
	r, end, err := a.modelResponse(ctx, cur, overflows)
	return r, false, end, err
}

// blockedCalls is where a handed-over turn went on from; 0 for a new one.
func (m Inbound) blockedCalls() int {
	if m.Blocked == nil {
		return 0
	}
	return m.Blocked.Calls
}

// modelResponse calls the model for the turn's next step: the response, or
// end with the turn's reply as its content (the calls spent, a failure, an
// interrupt, the escalation's last answer); nil after a compaction, to call
// again.
func (a *agent) modelResponse(ctx workflow.Context, cur *turnCursor, overflows *int) (*model.Response, bool, error) {
	ends := func(reply string) (*model.Response, bool, error) { return &model.Response{Content: reply}, true, nil }
	if cur.at.Calls >= a.cfg.MaxTurns {
		reply := fmt.Sprintf("Stopped: this message used all %d model calls allowed per user message (max_turns). Send another message to continue.", a.cfg.MaxTurns)
		a.append(model.Message{Role: model.RoleAssistant, Content: reply})
		todo.TurnEnded(&a.todo)
		return ends(reply)
	}
	if err := a.compactOnRequest(ctx); err != nil {
		return nil, false, err
	}
	resp, err := a.callModel(ctx)
	if errors.Is(err, errInterrupted) {
		return ends(a.endInterrupted())
	}
	if err != nil {
		err = a.recover(ctx, err, overflows)
		var tf *turnFailure
		switch {
		case errors.Is(err, errInterrupted):
			// Interrupted in the compaction an overflow asked for.
			return ends(a.endInterrupted())
		case errors.As(err, &tf):
			a.append(model.Message{Role: model.RoleAssistant, Name: api.NameModelError, Content: tf.reply})
			a.failedTurn = true
			todo.TurnEnded(&a.todo)
			return ends(tf.reply)
		}
		return nil, false, err // nil: compacted, call again
	}
	a.append(model.Message{Role: model.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls})
	if cur.at.LastCall {
		// The guard gave up (todo_blocked): this answer ends the turn,
		// and a tool it calls anyway is answered, never run.
		for _, c := range resp.ToolCalls {
			a.append(model.Message{Role: model.RoleTool, ToolCallID: c.ID, IsError: true,
				Content: "Not run: the turn has ended (todo_blocked). Tell the user what is unfinished and why."})
		}
		cur.at.LastCall = false
		return ends(resp.Content)
	}
	return &resp, false, nil
}

// afterTools follows the answers of the tool calls of a model response:
// end reports a successful todo_pause, which ends the turn at once (no
// further model call, no reminder); errHandOver, a wait of the response
// handed over to the continuation, the cursor saying which.
func (a *agent) afterTools(ctx workflow.Context, cur *turnCursor, resp model.Response) (end bool, err error) {
	at := &cur.at
	switch {
	case at.Tools:
		// A wait for a call's approval was handed over before any call
		// ran: the continuation answers the response, then calls the
		// model.
		*at = BlockedTurn{Calls: at.Calls, Tools: true, Verdicts: at.Verdicts, Resume: at.Resume}
		return false, errHandOver
	case len(at.Held) > 0:
		// Calls the worker held wait for approval in the continuation
		// (and then the plan's, when startPlan handed its wait over
		// too); the response's other calls have their answers.
		*at = BlockedTurn{Calls: at.Calls, Held: at.Held, Approval: at.Approval, Resume: at.Resume}
		return false, errHandOver
	case at.Approval:
		// startPlan handed its wait over: the turn goes on in the
		// continuation, with the verdict, at its next model call.
		*at = BlockedTurn{Calls: at.Calls + 1, Approval: true, Resume: at.Resume}
		return false, errHandOver
	case a.todo.Paused:
		return true, nil
	}
	names := make([]string, len(resp.ToolCalls))
	for i, c := range resp.ToolCalls {
		names[i] = c.Name
	}
	if inj := todo.AfterTools(&a.todo, a.cfg.Todo, names); !inj.None() {
		a.inject(inj)
	}
	a.publish(ctx)
	return false, nil
}

// lastCalls are the tool calls of the transcript's last message, the
// response a handed-over turn answers first; none when the carry could not
// keep it, and the model is then called again.
func (a *agent) lastCalls(ctx workflow.Context) []model.ToolCall {
	if n := len(a.window.msgs); n > 0 && a.window.msgs[n-1].Role == model.RoleAssistant && len(a.window.msgs[n-1].ToolCalls) > 0 {
		return a.window.msgs[n-1].ToolCalls
	}
	workflow.GetLogger(ctx).Warn("a handed-over turn's response is not in the carried transcript; the model is called again")
	return nil
}

// answered follows an answer without tool calls: while a plan step waits
// on a live agent, the turn waits (waitBlocked) and the model hears what
// unblocked it; then the guards decide whether the turn ends, with reply,
// or the model is prompted again. A wait that a handover interrupts
// (errHandOver) leaves the cursor on the blocked steps.
func (a *agent) answered(ctx workflow.Context, cur *turnCursor, content string) (reply string, end bool, err error) {
	a.settleUnknown(ctx, true)
	waited, err := a.waitBlocked(ctx)
	if errors.Is(err, errHandOver) {
		cur.at = BlockedTurn{Calls: cur.at.Calls, Resume: cur.at.Resume}
	}
	if err != nil || waited || a.plans.UnheardOwn() {
		// A step unblocked (in the wait, or while the model wrote this
		// answer): the model goes on, and hears of it first, guards or
		// not.
		return "", false, err
	}
	inj := todo.EndOfTurn(&a.todo, a.cfg.Todo, a.continuation, a.plans.UnfinishedSteps())
	if inj.None() {
		return content, true, nil
	}
	a.inject(inj)
	cur.at.LastCall = inj.Name == todo.NameBlocked
	a.publish(ctx)
	return "", false, nil
}

// inject adds a guard's message to the transcript, where it stays: a reader
// of the run (or of a later window) sees why the model was prompted.
func (a *agent) inject(in todo.Inject) {
	a.append(model.Message{Role: model.RoleUser, Name: in.Name, Content: in.Text})
}

// requestSpans selects what the next model call receives: the model's view of
// the transcript (context.go) cut to context.max_messages, after the
// context-loss rule (todo.ContextReminder) had its say on that view.
func (a *agent) requestSpans() []transcript.Span {
	isTool := func(i int) bool { return a.window.msgs[i].Role == model.RoleTool }
	start := func() int {
		return max(todo.Window(len(a.window.msgs), a.cfg.in.Context.MaxMessages, isTool), a.viewStart())
	}
	from := start()
	wrote, reminded := false, false
	for _, sp := range a.view(from) {
		for _, m := range a.window.msgs[sp.Start:sp.End] {
			reminded = reminded || m.Name == todo.NameReminder
			for _, c := range m.ToolCalls {
				wrote = wrote || c.Name == todo.ToolWrite
			}
		}
	}
	if inj := todo.ContextReminder(&a.todo, a.cfg.Todo, wrote, reminded); !inj.None() {
		a.inject(inj)
		from = start()
	}
	return a.view(from)
}

func (a *agent) append(m model.Message) {
	if m.ToolCalls == nil {
		m.ToolCalls = []model.ToolCall{}
	}
	a.window.msgs = append(a.window.msgs, m)
}

// lastReply is the content of the last assistant message without tool calls.
func (a *agent) lastReply() string {
	for i := len(a.window.msgs) - 1; i >= 0; i-- {
		if m := a.window.msgs[i]; m.Role == model.RoleAssistant && len(m.ToolCalls) == 0 {
			return m.Content
		}
	}
	return ""
}
