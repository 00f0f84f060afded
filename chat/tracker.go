package chat

import (
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/todoflow/todoflow/api"

	"github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// tracker turns the watch's events (client.Session.Watch) into what the
// client shows: the blocks to print once (messages, other agents' news),
// the live parts that change in place (the reply being written, the
// running tools, what waits for the user, the progress line) and whether
// the session has ended (closed). Both the terminal view and the line mode
// use it.
type tracker struct {
	st   *api.State
	held []entry // the first state's news, printed after the first look's messages
	// ended are the subagents that finished since the client watches,
	// whose answers are yet to be shown (takeEnded).
	ended   []string
	stateAt time.Time // when st was read, to notice a new answer
	closed  string
	ending  string // the session ended so, not yet told (no state read since)
	// stream is the reply being written, or the last one until its message
	// is in the transcript; running says a model call runs now, replied
	// that an assistant message came since the stream's call started.
	stream  *client.StreamChanged
	running bool
	replied bool
	stale   bool // the stream shown is an earlier attempt's: nothing writes it now
	tools   []client.RunningTool
	// result is the latest tool result, which the transcript shows by its
	// first line only (Ctrl+O prints it whole).
	result *model.Message
	// diff is the latest diff a tool call showed, of call diffCall: under
	// its result by its first lines only (diff.go; Ctrl+O prints it whole).
	diff, diffCall string
	// resultOf and diffOf name the calls of result and diff as the user
	// knows them: the tool and the file it worked on (callLabel).
	resultOf, diffOf string
	err              error        // why the latest look or query failed; nil when it did not
	retry            client.Retry // what the retries of the failing model call show
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
		if t.st == nil {
			// The first look (an attach): the transcript comes first, and
			// what other agents did in it after, when the look is in.
			t.held, _ = news(nil, &ev.State)
		} else {
			var ended []string
			out, ended = news(t.st, &ev.State)
			t.ended = append(t.ended, ended...)
		}
		t.st, t.stateAt = &ev.State, ev.At
	case client.Looked:
		out, t.held = t.held, nil
	case client.NewMessage:
		m := ev.Message
		failed := m.Name == api.NameModelError && t.stream != nil && t.stream.Text != ""
		if m.Role == model.RoleAssistant && t.stream != nil && (m.Name == api.NameInterrupted || failed) {
			// The turn was stopped mid-reply, or its call failed for good:
			// what the user read stays, marked as cut, above the message
			// that says so. An interrupt's message holds it
			// (messageEntries) unless its worker could not tell (an older
			// run, a worker gone): the stream's text then.
			if cut, _ := api.SplitInterrupted(m.Content); failed || cut == "" && t.stream.Text != "" {
				out = append(out, entry{kindReply, t.stream.Text}, entry{kindNote, cutNote})
			}
			t.stream = nil
		}
		out = append(out, messageEntries(m)...)
		t.replied = t.replied || m.Role == model.RoleAssistant
		if m.Role == model.RoleAssistant && len(m.ToolCalls) > 0 {
			t.calls = map[string]model.ToolCall{}
			for _, c := range m.ToolCalls {
				t.calls[c.ID] = c
			}
		}
		if m.Role == model.RoleTool {
			c, ok := t.calls[m.ToolCallID]
			if !ok {
				c = model.ToolCall{ID: m.ToolCallID}
			}
			// The todo and plan tools' results are the loop's own
			// account, which the checklist shows: Ctrl+O keeps the
			// latest result of a tool that did something.
			if !todo.IsTool(c.Name) && !todo.IsPlanTool(c.Name) {
				t.result, t.resultOf = &m, callLabel(c)
			}
			if ev.Diff != "" {
				t.diff, t.diffCall, t.diffOf = ev.Diff, m.ToolCallID, callLabel(c)
				out = append(out, diffEntries(ev.Diff, diffCollapsed)...)
			}
		}
	case client.StreamChanged:
		t.running = ev.Running
		// An empty text is a call that has written nothing yet: a new
		// attempt, or one no worker runs (no call number then). Keep
		// showing the reply so far until it has news, marked as cut.
		newCall := t.stream == nil || (ev.Call != 0 && t.stream.Call != ev.Call)
		if ev.Running && ev.Text != "" && !newCall && t.stream.Text != "" && ev.Attempt > t.stream.Attempt && !sameReply(ev.Text, t.stream.Text) {
			// The call's next attempt writes the reply anew: what the
			// attempt before had written stays, marked as cut. An attempt
			// that writes the same reply again (the worker's answer to a
			// call whose completion was lost) is the same text, shown once.
			out = append(out, entry{kindReply, t.stream.Text}, entry{kindNote, cutNote})
		}
		if ev.Running && (ev.Text != "" || newCall) {
			if newCall {
				t.replied = false
			}
			t.stream = &ev
		}
		t.stale = ev.Running && ev.Text == "" && t.stream != nil && t.stream.Text != ""
	case client.ToolsChanged:
		t.tools = ev.Running
	case client.Closed:
		t.ending = ev.Status
	case client.ModelErrorChanged:
		t.retry = ev.Retry
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

// cutNote marks a reply cut short: the text above it is what the model
// had written when its call stopped.
const cutNote = "✂ cut here: the model call stopped"

// streamCut reports whether the reply shown has stopped being written
// while its call goes on: its attempt failed, its worker is gone. The
// next attempt writes the reply anew.
func (t *tracker) streamCut() bool {
	if t.stream == nil || t.stream.Text == "" {
		return false
	}
	retried := t.st != nil && t.st.ModelError != nil && t.st.ModelError.Retryable
	return t.stale || retried || t.stall() != ""
}

// stall is why the session makes no progress when the client can name it
// (no worker takes its work, the server does not answer); "" otherwise.
//
// A subagent's wait stands in for the status only while the session is at
// work or waits on its subagents; otherwise (the user's turn) it is told
// beside it.
func (t *tracker) stall() string {
	nw, noWorker := errors.AsType[*client.NoWorkerError](t.err)
	_, noServer := errors.AsType[*client.ServerDownError](t.err)
	if !noWorker && !noServer {
		return ""
	}
	if noWorker && nw.Agent != "" && t.st != nil && t.st.Status != api.StatusRunning && t.st.Status != api.StatusBlocked {
		return ""
	}
	return t.err.Error()
}

// takeEnded returns the subagents that finished since the last call.
func (t *tracker) takeEnded() []string {
	ids := t.ended
	t.ended = nil
	return ids
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
			calls[i] = client.WaitingCall{AgentID: c.AgentID, CallID: c.CallID, Tool: tc.Name, Arguments: tc.Arguments, Whole: true, Diff: c.Diff}
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

// sameReply reports whether two texts of one call's attempts are the same
// reply, one further along than the other.
func sameReply(a, b string) bool { return strings.HasPrefix(a, b) || strings.HasPrefix(b, a) }
