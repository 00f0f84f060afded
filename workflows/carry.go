package workflows

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/internal/text"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// What a run hands to its continuation of the transcript: carrying the
// whole conversation would move the history's size into the next run's
// first event. The earlier messages stay in the previous run's history.
const (
	carryMessages = 60
	carryBytes    = 512 << 10
)

// summariseForCarry compacts the model's view before a handover when the
// carry could not hold it all: what the carry leaves out is summarised
// first, so that the continuation wakes up with what was decided. The
// summary gets one attempt: a model that is down does not hold the
// handover, which goes on without it.
func (a *agent) summariseForCarry(ctx workflow.Context) error {
	var recent []model.Message
	for _, sp := range a.view(a.viewStart()) {
		// A session with no message yet has less than its head.
		lo, hi := min(max(sp.Start, todo.Head), len(a.window.msgs)), min(max(sp.End, todo.Head), len(a.window.msgs))
		for _, m := range a.window.msgs[lo:hi] {
			if m.Name != api.NameContextSummary {
				recent = append(recent, m)
			}
		}
	}
	if !a.cfg.Summarize || len(recent) <= carryMessages && size(recent) <= carryBytes {
		return nil
	}
	// The recent part kept is what the carry holds: carryBytes, at most
	// carryMessages messages less one for the summary.
	_, err := a.compactKeeping(ctx, carryBytes/bytesPerToken*keepShare, carryMessages-1, oneAttempt)
	switch {
	case err == nil || errors.Is(err, errNothingToCompact):
		return nil
	case temporal.IsCanceledError(err) || ctx.Err() != nil:
		return err
	}
	workflow.GetLogger(ctx).Warn("the view was not summarised before the handover; the carry keeps its recent part only", "error", err)
	return nil
}

// carriedMessages is the transcript to carry: the head (system prompt,
// first user message), the context summary, which stands for everything
// before the tail, and the longest tail of at most carryMessages messages
// and carryBytes bytes that does not start on a tool result. When the
// list's last write_todos falls out, the context-loss rule reminds the
// model of its checklist.
func carriedMessages(msgs []model.Message) []model.Message {
	if len(msgs) <= todo.Head+carryMessages && size(msgs) <= carryBytes {
		return msgs
	}
	start, total := len(msgs), 0
	for start > todo.Head && len(msgs)-start < carryMessages {
		n := size(msgs[start-1 : start])
		if total+n > carryBytes {
			break
		}
		total += n
		start--
	}
	last := lastResponse(msgs)
	var group []model.Message
	if start > last && last >= todo.Head && msgs[last].Role == model.RoleAssistant && len(msgs[last].ToolCalls) > 0 {
		// The tail holds only results of the last response, or nothing: a
		// turn handed over between its steps, whose next model call needs
		// that response and its results. They cross, the results cut to
		// fit, rather than the turn going on without them.
		group, start = cutResults(msgs[last:], carryBytes), len(msgs)
	}
	for start < len(msgs) && msgs[start].Role == model.RoleTool {
		start++ // a result without its call is refused by providers
	}
	out := append([]model.Message(nil), msgs[:min(todo.Head, len(msgs))]...)
	before := start
	if group != nil {
		before = last
	}
	for i := before - 1; i >= todo.Head; i-- {
		if msgs[i].Name == api.NameContextSummary {
			out = append(out, msgs[i]) // the latest one stands for all before it
			break
		}
	}
	out = append(out, msgs[start:]...)
	return append(out, group...)
}

// lastResponse is the index of the transcript's last assistant message,
// or -1.
func lastResponse(msgs []model.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == model.RoleAssistant {
			return i
		}
	}
	return -1
}

// cutResults fits a response and its tool results (group[0] and the rest)
// into about budget bytes: each result keeps an even share of what the
// response leaves, with a note that the whole result is in the previous
// run's history.
func cutResults(group []model.Message, budget int) []model.Message {
	out := append([]model.Message(nil), group...)
	if len(out) < 2 || size(out) <= budget {
		return out
	}
	share := max(512, (budget-size(out[:1]))/(len(out)-1))
	for i := 1; i < len(out); i++ {
		if c := out[i].Content; len(c) > share {
			note := fmt.Sprintf("\n\n[Cut at a handover: this result was %d bytes; the whole result is in the session's previous run.]", len(c))
			out[i].Content = text.Cut(c, max(0, share-len(note))) + note
		}
	}
	return out
}

func size(msgs []model.Message) int {
	n := 0
	for _, m := range msgs {
		b, _ := json.Marshal(m)
		n += len(b)
	}
	return n
}

// carry is the input of the continuation: the same settings, with this
// run's state and its transcript compacted. Updates still waiting on a
// reply never cross the boundary (AgentWorkflow waits for all handlers
// first, and a handed-over turn's callers were answered: replies.go), so
// seqs restart safely.
func (a *agent) carry() handover {
	in := handover{AgentInput: a.cfg.in}
	in.Prompt = ""
	// The continuation may start on another build (Worker Versioning moves
	// a session here): both say who wrote them (protocol.go).
	in.Protocol = api.Protocol
	// The continuation keeps the host of this run's workspace.
	in.WorkspaceHost = a.host.queue
	a.plans.Prune(carryEvents, carryEventBytes)
	in.Carry = &Carry{
		Protocol: api.Protocol,
		Session: SessionCarry{Turns: a.turns, ModelCalls: a.modelCalls, Continuation: a.continuation, Ended: a.ended,
			FailedTurn: a.failedTurn, ModelError: a.modelError, Usage: a.usage, Served: a.served},
		Window:    a.carryWindow(),
		Todo:      a.todo,
		Plans:     a.plans,
		Inbox:     a.inbox.carry(),
		Approvals: a.approvals.carry(),
		Tree:      a.carryTree(),
		Published: &PublishedAttrs{Total: a.published.total, Completed: a.published.completed,
			Current: a.published.current, Status: a.published.status},
		Reports: a.reporters.carry(),
	}
	in.Carry.Diffs = a.diffs.carry(in.Carry.Window.Messages)
	return in
}

// handover is a continuation's input as this package sees it: the
// contract's input with its carry decoded. To everyone else the carry is
// opaque JSON (api.AgentInput.Carry), which this package alone writes and
// reads, so that its parts can change with the run's components.
type handover struct {
	api.AgentInput
	// Carry is AgentInput.Carry decoded, which it stands for.
	Carry *Carry `json:"-"`
}

// readHandover decodes in's carry.
func readHandover(in api.AgentInput) (handover, error) {
	h := handover{AgentInput: in}
	if len(in.Carry) == 0 {
		return h, nil
	}
	h.Carry = new(Carry)
	if err := json.Unmarshal(in.Carry, h.Carry); err != nil {
		return handover{}, fmt.Errorf("carry: %w", err)
	}
	return h, nil
}

// input is h as it goes to the continuation: its carry encoded into the
// input, the same JSON as when the carry was a field of the input's own.
func (h handover) input() (api.AgentInput, error) {
	in := h.AgentInput
	in.Carry = nil
	if h.Carry == nil {
		return in, nil
	}
	b, err := json.Marshal(h.Carry)
	if err != nil {
		return api.AgentInput{}, fmt.Errorf("carry: %w", err)
	}
	in.Carry = b
	return in, nil
}
