package chat

import (
	"slices"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/workflows"
)

// tracker turns the watcher's snapshots into what the client shows: the
// blocks to print once (messages, other agents' news, the end of the
// session) and the live parts that change in place (the reply being
// written, the running tools, what waits for the user, the progress line).
// Both the terminal view and the line mode use it.
type tracker struct {
	st      *workflows.State
	stateAt int64 // StateAt of st, in ns, to notice a new answer
	closed  string
	stream  *activities.ReplyStream
	tools   []string
	err     error // why the latest look or query failed; nil when it did not
}

// apply takes in a snapshot and returns what to print.
func (t *tracker) apply(s Snapshot) []entry {
	var out []entry
	if s.State != nil && s.StateAt.UnixNano() != t.stateAt {
		out = append(out, news(t.st, s.State)...)
		t.st, t.stateAt = s.State, s.StateAt.UnixNano()
	}
	replied := false
	for _, m := range s.NewMessages {
		out = append(out, messageEntries(m)...)
		replied = replied || m.Role == model.RoleAssistant
	}
	switch {
	case s.Stream != nil:
		// An empty text is a call that has written nothing yet (or a new
		// attempt): keep showing the reply so far until it has news.
		if s.Stream.Text != "" || t.stream == nil || t.stream.Call != s.Stream.Call {
			t.stream = s.Stream
		}
	case replied || s.Closed || (t.st != nil && t.st.Status != workflows.StatusRunning):
		// The reply is in the transcript now (printed above); until it is,
		// the finished call's text stays, so that it never blinks out.
		t.stream = nil
	}
	t.tools = s.Tools
	t.err = s.StateErr
	if s.Closed && t.closed == "" && s.State != nil {
		t.closed = s.CloseStatus
		out = append(out, entry{kindNote, "The session has ended (" + s.CloseStatus + ")."})
	}
	return out
}

// fail records a look that failed (the server may be restarting).
func (t *tracker) fail(err error) { t.err = err }

// waiting reports whether the session waits for the user: for a message,
// an approval or a resume, or it has ended.
func (t *tracker) waiting() bool {
	if t.closed != "" {
		return true
	}
	return t.st != nil && slices.Contains([]string{workflows.StatusWaitingUser, workflows.StatusAwaitingApproval, workflows.StatusPaused}, t.st.Status)
}
