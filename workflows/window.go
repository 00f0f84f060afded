package workflows

import (
	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
	"github.com/todoflow/todoflow/transcript"
)

// window is the transcript and what the model sees of it: every message of
// the run, where the model's view starts after a compaction (context.go),
// the context budget the provider taught the session, and how much of the
// transcript the model calls have sent so far (modelcall.go).
type window struct {
	msgs []model.Message
	comp compaction
	// contextLimit is the budget the provider taught the run when it
	// refused a request as too long (todo.ContextLimit); 0 until then.
	contextLimit int
	// sentTokens is the estimate of the last model request, for an
	// overflow's new budget.
	sentTokens int
	// summaryCalls counts the summarising model calls among the run's.
	summaryCalls int
	// compactAsked: a compact_context update waits for the loop, which
	// answers it with compactAnswer (context.go).
	compactAsked  bool
	compactAnswer api.CompactResult

	// Each model call carries the messages added since the previous one
	// (sentMsgs is how many were sent so far, epoch counts the messages
	// taken back after they were sent), so that a worker keeps the
	// transcript (transcript.Cache) and one that lacks it reads it from
	// the run's history. heard are the values that entered history as
	// they are since then (and the user's messages still queued): a field
	// left out that is not among them is recorded (recordMade).
	sentMsgs      int
	epoch         int
	carriedUnsent bool
	heard         transcript.Heard
	// wholeDue asks the next call to send message wholeAt again, whole: a
	// call an older build scheduled left one of its fields out, which no
	// reader can find (transcript.ErrTypeHole).
	wholeDue bool
	wholeAt  int
}

// resendWhole makes the next model call send the transcript again from
// message i, which it sends whole, after a call failed for want of it.
func (w *window) resendWhole(i int) {
	w.sentMsgs, w.wholeAt, w.wholeDue = min(w.sentMsgs, i), i, true
}

// WindowCarry is the window a run hands to its continuation: the messages
// the model sees now, and what the session learned of its context.
type WindowCarry struct {
	Messages []model.Message `json:"messages"`
	// SummaryCalls are the summarising calls among the session's model
	// calls.
	SummaryCalls int `json:"summary_calls,omitempty"`
	// ContextLimit is the context budget the provider taught the session
	// (todo.ContextLimit); 0: none yet.
	ContextLimit int `json:"context_limit,omitempty"`
}

// newWindow is a run's window: the carried one, or a transcript of the
// system prompt alone.
func newWindow(cfg config) window {
	if c := cfg.carry; c != nil {
		// The carried messages are in this run's input already; its first
		// model call does not send them again, only their digests: a
		// worker finds them in its copy of the run before, or reads them
		// from this run's first event.
		return window{msgs: c.Window.Messages, summaryCalls: c.Window.SummaryCalls, contextLimit: c.Window.ContextLimit,
			sentMsgs: len(c.Window.Messages), carriedUnsent: true}
	}
	base := cfg.in.SystemPrompt
	if base == "" {
		base = todo.DefaultSystemPrompt
	}
	return window{msgs: []model.Message{{Role: model.RoleSystem, Content: todo.SystemPrompt(base, cfg.Todo), ToolCalls: []model.ToolCall{}}}}
}

// carryWindow is the window's part of a carry: the continuation starts
// from what the model sees now, cut to carriedMessages.
func (a *agent) carryWindow() WindowCarry {
	var msgs []model.Message
	for _, sp := range a.view(a.viewStart()) {
		msgs = append(msgs, a.window.msgs[sp.Start:sp.End]...)
	}
	return WindowCarry{Messages: carriedMessages(msgs), SummaryCalls: a.window.summaryCalls, ContextLimit: a.window.contextLimit}
}

// messagesQuery answers the public messages query (api.MessagesQuery), a
// page of the transcript (transcript.MessagesPage).
func (a *agent) messagesQuery(offset, limit int) ([]model.Message, error) {
	return transcript.MessagesPage(a.window.msgs, offset, limit)
}
