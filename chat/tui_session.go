package chat

import (
	"context"
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/todoflow/todoflow/client"
)

// How the terminal view drives its session: the messages it sends, in the
// order typed; the start of a new session with its first message; and the
// watch the view follows.

// send queues a message on the session, in the order typed; only the wait
// for its answer runs on its own.
func (u *ui) send(text string) tea.Cmd {
	ctx, sent := u.ctx, u.sess.s.Send(u.ctx, text)
	return func() tea.Msg { return sentMsg{text, replied(ctx, sent)} }
}

// begin starts the new session with text as its first message (the run's
// prompt); while the start is under way, it keeps text to send once the
// session exists, after the messages typed before it.
func (u *ui) begin(text string) tea.Cmd {
	if u.starting {
		u.early = append(u.early, text)
		return nil
	}
	u.starting = true
	ctx, n, id := u.ctx, *u.sess.pending, u.sess.id
	return func() tea.Msg {
		s, err := n.start(ctx, id, text)
		return startedMsg{s: s, prompt: text, err: err}
	}
}

// started ends the new session's start. The session is watched from now
// on, and the messages typed during its start are sent, in order, after
// its first. A start that failed puts what was typed back at the prompt,
// the first message first: nothing typed is lost, and Enter tries again.
func (u *ui) started(msg startedMsg) tea.Cmd {
	early := u.early
	u.starting, u.early = false, nil
	if msg.err != nil {
		unsent := append([]string{msg.prompt}, early...)
		for _, m := range unsent {
			u.dequeue(m)
		}
		if v := u.input.Value(); v != "" {
			unsent = append(unsent, v)
		}
		u.input.SetValue(strings.Join(unsent, "\n"))
		return u.print([]entry{{kindError, "The session did not start: " + msg.err.Error() +
			"\nWhat you typed is back at the prompt; Enter sends it again."}})
	}
	u.sess = &session{s: msg.s, id: msg.s.ID(), stops: u.sess.stops}
	cmds := []tea.Cmd{u.print([]entry{{kindNote, startedLine(u.sess.id)}}), u.watch(msg.s)}
	for _, m := range early {
		cmds = append(cmds, u.send(m))
	}
	return tea.Batch(cmds...)
}

// clear makes a new session, which its first message will start, the one
// shown: the previous one goes on, unwatched.
func (u *ui) clear() tea.Cmd {
	prev := u.sess.id
	u.watch(nil)
	u.sess = &session{id: newID(), pending: &newSession{c: u.client, model: u.model, poll: u.poll}, stops: u.sess.stops}
	u.tr, u.pending, u.queued = tracker{}, nil, nil
	u.ask, u.answered, u.answering, u.lineCall = nil, "", false, ""
	note := fmt.Sprintf("A new session, which starts with your first message; the previous one, %s, goes on (starter chat --id %s comes back to it).", prev, prev)
	return u.print([]entry{{kindNote, note}})
}

// watch makes the watch of s (none for nil) the one the view follows,
// ending the previous one, whose looks still on their way are dropped.
func (u *ui) watch(s *client.Session) tea.Cmd {
	if u.stopWatch != nil {
		u.stopWatch()
	}
	u.gen++
	u.looks, u.stopWatch = nil, nil
	if s == nil {
		return nil
	}
	wctx, stop := context.WithCancel(u.ctx)
	u.stopWatch, u.looks = stop, s.Watch(wctx, u.poll)
	return u.next()
}

// dequeue takes the first queued message with this text off the queue: the
// transcript shows it now, or it was not sent.
func (u *ui) dequeue(text string) {
	if i := slices.Index(u.queued, text); i >= 0 {
		u.queued = slices.Delete(u.queued, i, i+1)
	}
}
