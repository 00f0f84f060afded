package chat

import (
	"slices"

	"github.com/todoflow/todoflow/api"

	"github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/model"
)

// tracker turns the watch's events (client.Session.Watch) into what the
// client shows: the blocks to print once (messages, other agents' news),
// the live parts that change in place (the reply being written, the
// running tools, what waits for the user, the progress line) and whether
// the session has ended (closed). Both the terminal view and the line mode
// use it.
type tracker struct {
	st      *api.State
	stateAt int64 // the time st was read, in ns, to notice a new answer
	closed  string
	ending  string // the session ended so, not yet told (no state read since)
	// stream is the reply being written, or the last one until its message
	// is in the transcript; running says a model call runs now, replied
	// that an assistant message came since the stream's call started.
	stream  *client.StreamChanged
	running bool
	replied bool
	tools   []client.RunningTool
	// result is the latest tool result, which the transcript shows by its
	// first line only (Ctrl+O prints it whole).
	result *model.Message
	// diff is the latest diff a tool call showed, of call diffCall: under
	// its result by its first lines only (diff.go; Ctrl+O prints it whole).
	diff, diffCall string
	err            error // why the latest look or query failed; nil when it did not
	// calls are the tool calls of the latest model answer, by id: a call
	// that waits for approval shows whole from here (the state holds only
	// the start of long arguments); read are the calls of subagents read
	// whole from their own transcripts (approval.go).
	calls map[string]model.ToolCall
	read  map[string]client.WaitingCall
}

// apply takes in an event and returns what to print.
func (t *tracker) apply(ev client.Event) []entry {
	var out []entry
	switch ev := ev.(type) {
	case client.StateChanged:
		out = news(t.st, &ev.State)
		t.st, t.stateAt = &ev.State, ev.At.UnixNano()
	case client.NewMessage:
		out = messageEntries(ev.Message)
		t.replied = t.replied || ev.Message.Role == model.RoleAssistant
		if m := ev.Message; m.Role == model.RoleAssistant && len(m.ToolCalls) > 0 {
			t.calls = map[string]model.ToolCall{}
			for _, c := range m.ToolCalls {
				t.calls[c.ID] = c
			}
		}
		if ev.Message.Role == model.RoleTool {
			m := ev.Message
			t.result = &m
			if ev.Diff != "" {
				t.diff, t.diffCall = ev.Diff, m.ToolCallID
				out = append(out, diffEntries(ev.Diff, diffCollapsed)...)
			}
		}
	case client.StreamChanged:
		t.running = ev.Running
		// An empty text is a call that has written nothing yet (or a new
		// attempt): keep showing the reply so far until it has news.
		if ev.Running && (ev.Text != "" || t.stream == nil || t.stream.Call != ev.Call) {
			if t.stream == nil || t.stream.Call != ev.Call {
				t.replied = false
			}
			t.stream = &ev
		}
	case client.ToolsChanged:
		t.tools = ev.Running
	case client.Closed:
		t.ending = ev.Status
	case client.Problem:
		t.err = ev.Err
	}
	// The reply is in the transcript now (printed above); until it is, the
	// finished call's text stays, so that it never blinks out.
	if !t.running && (t.replied || t.ending != "" || (t.st != nil && t.st.Status != api.StatusRunning)) {
		t.stream = nil
	}
	// The end is told by the view, which reads why a run failed (ending).
	if t.ending != "" && t.closed == "" && t.st != nil {
		t.closed = t.ending
	}
	return out
}

// waiting reports whether the session waits for the user: for a message,
// an approval or a resume, or it has ended.
func (t *tracker) waiting() bool {
	if t.closed != "" {
		return true
	}
	return t.st != nil && slices.Contains([]string{api.StatusWaitingUser, api.StatusAwaitingApproval, api.StatusPaused}, t.st.Status)
}

// waitingCalls are the tool calls that wait for approval, the agent's own
// first: whole when the transcript or a read of a subagent's has them.
func (t *tracker) waitingCalls() []client.WaitingCall {
	if t.st == nil {
		return nil
	}
	calls := client.WaitingCalls(*t.st)
	for i, c := range calls {
		if tc, ok := t.calls[c.CallID]; ok && c.AgentID == t.st.AgentID {
			calls[i] = client.WaitingCall{AgentID: c.AgentID, CallID: c.CallID, Tool: tc.Name, Arguments: tc.Arguments, Whole: true}
		} else if r, ok := t.read[c.CallID]; ok && !c.Whole {
			calls[i] = r
		}
	}
	return calls
}

// keepRead keeps a call read whole.
func (t *tracker) keepRead(c client.WaitingCall) {
	if !c.Whole {
		return
	}
	if t.read == nil {
		t.read = map[string]client.WaitingCall{}
	}
	t.read[c.CallID] = c
}
