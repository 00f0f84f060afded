package chat

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/todoflow/todoflow/api"

	"github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/internal/termtext"
)

// The line mode, when the client's input or output is not a terminal: the
// transcript and notices as plain lines, without the live parts. A line is
// read once the previous one has been answered: a message when its turn has
// ended, or earlier when the session waits for an approval or a resume (so
// that the next line can give it); a command when it has been carried out.

func runPlain(ctx context.Context, sess *session, looks <-chan client.Event, in io.Reader, out io.Writer, intro []string) error {
	// Every line may hold what a model, a tool or a file wrote, and a pipe
	// often ends on a terminal: each is printed cleaned (package termtext).
	say := func(line string) { fmt.Fprintln(out, termtext.Clean(line)) }
	for _, l := range intro {
		say(l)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(in)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	var (
		tr        tracker
		announced []string
		lastErr   string
		sending   int
		answers   = make(chan error)
		acted     time.Time           // when the session was last asked to do something
		shown     *client.WaitingCall // the tool call printed waiting, which /approve and /reject answer
		eof       bool
		settled   bool // the last look's events are all in
	)
	print := func(entries []entry) {
		for _, e := range entries {
			say(e.text)
		}
	}
	for {
		// Ready for the next line: the state read after the last action
		// says the session waits for the user.
		fresh := tr.st != nil && tr.stateAt.After(acted)
		human := fresh && slices.Contains([]string{api.StatusAwaitingApproval, api.StatusPaused}, tr.st.Status)
		ready := settled && (tr.closed != "" || human || (fresh && sending == 0 && tr.waiting()))
		// A session not started yet waits for its first message.
		ready = ready || sess.pending != nil
		if ready && eof {
			say(left(sess))
			return nil
		}
		var next <-chan string
		if ready {
			next = lines
		}
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-looks:
			if !ok {
				looks = nil // the watch is over; the session has ended
				continue
			}
			print(tr.apply(ev))
			// The rest once a look's events are all in: what waits and what
			// failed, after the transcript that led there.
			if _, settled = ev.(client.Looked); !settled {
				continue
			}
			if tr.err != nil && tr.err.Error() != lastErr {
				lastErr = tr.err.Error()
				say("! " + lastErr)
			}
			now := attention(tr.st, tr.retry)
			for _, a := range now {
				if !slices.Contains(announced, a) {
					say(a)
				}
			}
			announced = now
			shown = showCall(ctx, sess, &tr, shown, print)
			for _, id := range tr.takeEnded() {
				if sess.s == nil {
					break
				}
				reply, err := sess.s.SubagentReply(ctx, *tr.st, id)
				print(subagentEntries(id, reply, err))
			}
			if tr.closed != "" {
				line, err := sess.ending(ctx, tr.closed)
				say(line)
				return err
			}
		case err := <-answers:
			sending--
			acted = time.Now()
			if err != nil {
				say("! " + err.Error())
			}
		case text, ok := <-next:
			if !ok {
				eof = true
				continue
			}
			if text == "" {
				continue
			}
			l, err := parseLine(text)
			switch {
			case err != nil:
				say("! " + err.Error())
			case l.cmd == "quit":
				say(left(sess))
				return nil
			case l.message != "" && sess.pending != nil:
				// The first message starts the session, as its prompt; the
				// next line is read once its turn has answered it.
				s, err := sess.pending.start(ctx, sess.id, l.message)
				if err != nil {
					return fmt.Errorf("the session did not start: %w", err)
				}
				looks = s.Watch(ctx, sess.pending.poll)
				sess.s, sess.pending = s, nil
				acted = time.Now()
				say(startedLine(sess.id))
			case sess.pending != nil && needs(l.cmd):
				say(fmt.Sprintf("! /%s: %v", l.cmd, errNotStarted))
			case l.message != "":
				sending++
				acted = time.Now()
				// Queued here, in the order read; only the wait for its
				// answer runs on its own.
				sent := sess.s.Send(ctx, l.message)
				go func() {
					err := replied(ctx, sent)
					select {
					case answers <- err:
					case <-ctx.Done():
					}
				}()
			default:
				say(text)
				res, err := sess.run(ctx, l, seen{st: tr.st, call: shown})
				if err != nil {
					say("! " + err.Error())
					continue
				}
				say(res)
				if changes(l.cmd) {
					acted = time.Now()
				}
			}
		}
	}
}

// left is the last line of a chat left, in either view (the terminal
// view's own while a start is under way).
func left(sess *session) string {
	if sess.pending != nil {
		return leftUnstarted
	}
	return leftLine(sess)
}

// changes reports whether a command asks the session to do something (and
// so the client waits for its effect before reading on); the others only
// show what is.
func changes(cmd string) bool {
	switch cmd {
	case "help", "todos", "plan", "agents":
		return false
	}
	return true
}

// showCall prints the first tool call waiting for approval whole, when it
// is not the one printed last (shown), and returns the call printed: the
// one /approve and /reject answer. A subagent's call is read whole from
// its own transcript first.
func showCall(ctx context.Context, sess *session, tr *tracker, shown *client.WaitingCall, print func([]entry)) *client.WaitingCall {
	calls := tr.waitingCalls()
	if len(calls) == 0 {
		return nil
	}
	c := calls[0]
	if shown != nil && shown.CallID == c.CallID && (shown.Whole || !c.Whole) {
		return shown
	}
	if !c.Whole && sess.s != nil && tr.st != nil {
		read, err := sess.s.ReadWhole(ctx, *tr.st, calls[:1])
		if err != nil {
			print([]entry{{kindError, "! " + err.Error()}})
		}
		tr.keepRead(read[0])
		c = read[0]
	}
	print(callEntries(c))
	hint := "/approve, /approve --remember (the tool for the rest of the session), or /reject FEEDBACK"
	if len(calls) > 1 {
		hint += fmt.Sprintf(" (1 of %d calls waiting)", len(calls))
	}
	print([]entry{{kindAttention, hint}})
	return &c
}
