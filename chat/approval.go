package chat

import (
	"fmt"
	"slices"
	"strings"

	"github.com/todoflow/todoflow/api"

	tea "charm.land/bubbletea/v2"

	"github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/internal/callview"
	"github.com/todoflow/todoflow/internal/termtext"
	"github.com/todoflow/todoflow/internal/text"
)

// A tool call that waits for approval is answered only once it is seen
// whole: the terminal view shows it in its live part, above the prompt
// (package callview lays it out), folded to the room the window leaves, and
// its keys (docs/chat.md) answer only on an empty prompt, so that what is
// typed otherwise stays a message or a command.
//
// An answer names the call it answers (approve_tool's call_id): the one
// shown. If another took its place meanwhile, the session refuses it; and
// a line typed while one call was shown does not answer another that came
// since (ui.lineCall).

// asking is the tool call the view shows waiting for approval.
type asking struct {
	call client.WaitingCall
	// of is how many calls wait in the tree, this one first.
	of int
	// top is the first of the call's lines shown when it is folded, rows
	// how many show (the view sets them, knowing the room): PgDn moves by
	// rows, so that no line is skipped.
	top, rows int
	// refusing says n was pressed: the prompt takes the feedback, Enter
	// sends the refusal, Esc goes back to the choices.
	refusing bool
	// gone says the call no longer waits while its refusal was being
	// typed (it stays shown until Enter or Esc).
	gone bool
}

// shownID is the call id of the tool call shown waiting, "" for none.
func (u *ui) shownID() string {
	if u.ask == nil {
		return ""
	}
	return u.ask.call.CallID
}

// syncAsk makes the prompt show the first tool call that waits now, after
// a look: a new call starts at its top, the call shown keeps its place. A
// refusal being typed keeps its call. A subagent's call is read whole from
// its own transcript, once.
func (u *ui) syncAsk() tea.Cmd {
	calls := slices.DeleteFunc(u.tr.waitingCalls(), func(c client.WaitingCall) bool {
		return c.CallID == u.answered // the state read may be older than the answer
	})
	if u.answering {
		// Nothing more is asked until the session has taken the answer: a
		// key pressed twice must not answer the next call unseen.
		u.ask = nil
		return nil
	}
	if u.ask != nil && u.ask.refusing {
		u.ask.gone = !slices.ContainsFunc(calls, func(c client.WaitingCall) bool { return c.CallID == u.ask.call.CallID })
		return nil
	}
	if len(calls) == 0 {
		u.ask = nil
		return nil
	}
	first := calls[0]
	if u.ask == nil || u.ask.call.CallID != first.CallID {
		u.ask = &asking{}
	}
	u.ask.call, u.ask.of = first, len(calls)
	if first.Whole || u.sess.s == nil || u.reading[first.CallID] {
		return nil
	}
	if u.reading == nil {
		u.reading = map[string]bool{}
	}
	u.reading[first.CallID] = true
	ctx, s, st := u.ctx, u.sess.s, *u.tr.st
	return func() tea.Msg {
		read, err := s.ReadWhole(ctx, st, []client.WaitingCall{first})
		return readMsg{call: read[0], err: err}
	}
}

// Messages of the approval prompt.
type (
	// readMsg is a subagent's call read whole, or why it could not be.
	readMsg struct {
		call client.WaitingCall
		err  error
	}
	// answeredMsg is the session's word on an answer to call.
	answeredMsg struct {
		call string
		out  string
		err  error
	}
)

// askKey handles a key while a tool call waits; ok is false for a key the
// prompt leaves to the rest of the view.
func (u *ui) askKey(key string) (cmd tea.Cmd, ok bool) {
	a := u.ask
	switch key {
	case "pgdown":
		a.top += max(a.rows, 1)
		return nil, true
	case "pgup":
		a.top = max(a.top-max(a.rows, 1), 0)
		return nil, true
	}
	if a.refusing {
		switch key {
		case "enter":
			feedback := text.OneLine(u.input.Value())
			u.input.Reset()
			return u.answer(false, false, feedback), true
		case "esc":
			a.refusing = false
			u.input.Reset()
			u.input.Placeholder = placeholder
			return nil, true
		}
		return nil, false
	}
	if u.input.Value() != "" {
		return nil, false
	}
	switch key {
	case "enter", "y":
		return u.answer(true, false, ""), true
	case "a":
		return u.answer(true, true, ""), true
	case "n":
		a.refusing = true
		u.input.Placeholder = "why not? (Enter sends the refusal)"
		return nil, true
	}
	return nil, false
}

// answer approves or rejects the call shown, by its call_id.
func (u *ui) answer(approve, remember bool, feedback string) tea.Cmd {
	a := u.ask
	if approve && !a.call.Whole {
		return u.print([]entry{{kindError, "not approved: the whole call is not shown yet (only its start is known); n or Esc refuses it"}})
	}
	u.input.Placeholder = placeholder
	u.answered, u.answering = a.call.CallID, true
	ctx, sess, sn := u.ctx, u.sess, seen{st: u.tr.st, call: &a.call}
	u.ask = nil
	return func() tea.Msg {
		out, err := sess.answer(ctx, approve, feedback, remember, sn)
		return answeredMsg{call: sn.call.CallID, out: out, err: err}
	}
}

// answeredLine takes the session's word on an answer: a refused one shows
// its call again.
func (u *ui) answeredLine(msg answeredMsg) tea.Cmd {
	u.answering = false
	if msg.err != nil {
		if u.answered == msg.call {
			u.answered = ""
		}
		return tea.Batch(u.print([]entry{{kindError, msg.err.Error()}}), u.syncAsk())
	}
	// The next call waiting, if any, shows with the next look: its state
	// is read after this answer was taken.
	return u.print([]entry{{kindNote, msg.out}})
}

// readLine takes a subagent's call read whole.
func (u *ui) readLine(msg readMsg) tea.Cmd {
	if msg.err != nil {
		return u.print([]entry{{kindError, msg.err.Error()}})
	}
	u.tr.keepRead(msg.call)
	return u.syncAsk()
}

// view is the prompt in at most room lines width wide: the call's header,
// its lines (from top when they do not all fit, with a line that says
// which show and how to see the others) and the choices.
func (a *asking) view(width, room int) []string {
	head := "✋ " + callview.Header(a.call) + " waits for your approval"
	if a.of > 1 {
		head += fmt.Sprintf(" (1 of %d calls waiting)", a.of)
	}
	var body []string
	for _, l := range callview.Lines(a.call) {
		wrapped := wrapHanging(l.Text, width)
		if l.Diff {
			// Its pieces in the colour of the line.
			style := diffStyle(l.Text)
			for i, w := range wrapped {
				wrapped[i] = paint(style, w)
			}
		}
		body = append(body, wrapped...)
	}
	top, choices := wrapHanging(head, width), wrapHanging(a.choices(), width)
	if len(top)+len(body)+len(choices) <= room {
		return slices.Concat(attend(top), body, attend(choices))
	}
	// The fold's numbers are at most as long as the count's.
	n := len(body)
	rows := max(room-len(top)-len(choices)-len(wrapHanging(foldLine(n, 2*n, n, n), width)), 1)
	// Clamped here, where the room is known: PgUp then moves from what
	// shows.
	a.top, a.rows = min(a.top, max(n-rows, 0)), rows
	end := min(a.top+rows, n)
	fold := wrapHanging(foldLine(a.top, end, n-end, n), width)
	return slices.Concat(attend(top), body[a.top:end], attend(fold), attend(choices))
}

// foldLine says how many lines of a folded call show (those after above,
// to end, of total), how many are hidden and how to see them. It counts
// the lines as shown, wrapped: a file's own numbers are on its lines.
func foldLine(above, end, below, total int) string {
	fold := fmt.Sprintf("⋮ %d of the call's %d lines shown", end-above, total)
	if below > 0 {
		fold += fmt.Sprintf(", %d more below", below)
	}
	if above > 0 {
		fold += fmt.Sprintf(", %d above", above)
	}
	return fold + " · PgDn/PgUp scroll · Ctrl+O prints the whole call above"
}

// attend paints lines as what waits for the user.
func attend(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = paint(styleAttention, l)
	}
	return out
}

func (a *asking) choices() string {
	switch {
	case a.refusing && a.gone:
		return "this call no longer waits · Enter sends the refusal all the same (the session refuses it) · Esc: back"
	case a.refusing:
		return "n: type why below (Enter sends the refusal with it; empty for no reason) · Esc: back to the choices"
	case !a.call.Whole:
		return "reading the whole call… · n no · Esc refuse the wait (stops the turn)"
	}
	return fmt.Sprintf("Enter/y yes · a always (%s for the rest of the session) · n no, saying why · Esc refuse the wait (stops the turn)", a.call.Tool)
}

// callEntries are the call printed whole: Ctrl+O, and the line mode when
// a call comes to wait.
func callEntries(c client.WaitingCall) []entry {
	out := []entry{{kindAttention, "✋ " + callview.Header(c) + " waits for approval:"}}
	for _, l := range callview.Lines(c) {
		k := kindCall
		if l.Diff {
			k = kindDiff
		}
		out = append(out, entry{k, l.Text})
	}
	return out
}

// wrapHanging is line cleaned and cut into lines at most width columns
// wide, after a space where there is one, never dropping a character; the
// lines after the first start under the text of a numbered line, or two
// columns in.
func wrapHanging(line string, width int) []string {
	line = expandTabs(termtext.Clean(line))
	if textWidth(line) <= width {
		return []string{line}
	}
	hang := leadingSpaces(line) + 2
	if i := strings.Index(line, "│ "); i >= 0 && i < 16 {
		hang = textWidth(line[:i]) + 2
	}
	if width-hang < 10 {
		hang = 0
	}
	var out []string
	lead := ""
	for line != "" {
		head := cutWidth(line, width-len(lead))
		if i := strings.LastIndexByte(head, ' '); len(head) < len(line) && i > 0 && strings.TrimSpace(head[:i]) != "" {
			head = head[:i+1]
		}
		out = append(out, lead+head)
		line = line[len(head):]
		lead = strings.Repeat(" ", hang)
	}
	return out
}

// seen is what the user was shown when answering: the latest state, and
// the tool call shown waiting (approve and reject answer that call, never
// another).
type seen struct {
	st   *api.State
	call *client.WaitingCall
}
