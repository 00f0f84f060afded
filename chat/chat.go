package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/todoflow/todoflow/api"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/term"
	"github.com/google/uuid"
	"go.temporal.io/api/serviceerror"

	"github.com/todoflow/todoflow/client"
)

// Options configure Run. Client is required (its task queue is where a new
// session starts; its data converter decodes the streamed reply); the zero
// value of the rest opens a new session on the process's standard input
// and output.
type Options struct {
	Client *client.Client
	// ID is the session's workflow id: an existing session is attached to,
	// a new one is started with it at its first message; empty gives a new
	// one a fresh id.
	ID string
	// Model is a new session's model reference (openai:…, script:…); empty
	// leaves it to the worker. An existing session keeps its own.
	Model string
	// Prompt is a new session's first message, which starts it when the
	// chat opens (the scripted demo's); empty starts the session with the
	// user's first message.
	Prompt string
	// In and Out default to os.Stdin and os.Stdout. When either is not a
	// terminal the client runs in line mode.
	In  io.Reader
	Out io.Writer
	// Plain forces the line mode.
	Plain bool
	// Notes are printed first (where the server is, how to see the Web UI).
	Notes []string
	// Poll is how often the session is looked at; 0 means DefaultPoll.
	Poll time.Duration
	// Prices price the session's tokens in the status line (see
	// LoadPrices); without them it shows the tokens only.
	Prices Prices
	// ServerStops says the server stops when the client leaves (the
	// embedded one `starter chat` starts): the session then waits in the
	// server's database, and the last line says so, not that it goes on.
	ServerStops bool
}

// DefaultPoll is how often the client looks at its session (see
// client.Session.Watch).
const DefaultPoll = client.DefaultWatchInterval

// Run opens (or attaches to) a session and talks to it until the user
// leaves, the input ends (line mode) or the session ends. Leaving never
// ends the session. A session that ends other than completed is an
// *EndedError, once the client has shown why.
func Run(ctx context.Context, o Options) error {
	if o.Client == nil {
		return errors.New("chat: no Temporal client")
	}
	if o.In == nil {
		o.In = os.Stdin
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	sess, intro, err := open(ctx, &o)
	if err != nil {
		return err
	}
	sess.stops = o.ServerStops
	intro = append(o.Notes, intro...)

	if o.Plain || !isTerminal(o.In) || !isTerminal(o.Out) {
		var looks <-chan client.Event
		if sess.s != nil {
			looks = sess.s.Watch(ctx, o.Poll)
		}
		return runPlain(ctx, sess, looks, o.In, o.Out, intro)
	}
	intro = append(intro, "/help: commands and keys · Ctrl+T: checklist · Alt+Enter: new line · Up: earlier lines · "+
		"Ctrl+C twice: leave (the session goes on)")
	u := newUI(ctx, sess, intro)
	u.prices = o.Prices
	u.client, u.model, u.poll = o.Client, o.Model, o.Poll
	u.watch(sess.s) // Init asks for its first look
	// What the program prints above its view is not downsampled by it:
	// the view tones it to the profile the program uses (NO_COLOR, a
	// terminal of 16 colours).
	u.profile = colorprofile.Detect(o.Out, os.Environ())
	p := tea.NewProgram(u, tea.WithContext(ctx), tea.WithInput(o.In), tea.WithOutput(o.Out), tea.WithColorProfile(u.profile))
	if _, err := p.Run(); err != nil && !errors.Is(err, tea.ErrProgramKilled) && ctx.Err() == nil {
		return fmt.Errorf("chat: %w", err)
	}
	return u.err
}

// open attaches to the session o.ID when the server has it. Otherwise the
// session is new (with a fresh id when o.ID is empty): started now when
// o.Prompt is its first message, else left to start with the user's first
// message (see session.pending). It returns the lines that say which.
func open(ctx context.Context, o *Options) (*session, []string, error) {
	if o.ID != "" {
		s, err := o.Client.Attach(ctx, o.ID)
		if err == nil {
			lines := []string{fmt.Sprintf("Session %s, attached; its transcript so far:", o.ID)}
			if o.Model != "" {
				lines = append(lines, "(--model applies to new sessions; this one keeps its model)")
			}
			return &session{s: s, id: o.ID}, lines, nil
		}
		if !errors.Is(err, client.ErrNoSession) {
			return nil, nil, err
		}
	} else {
		o.ID = newID()
	}
	// A model no session can run is said now, not at the first message.
	if err := api.CheckModel(o.Model); err != nil {
		return nil, nil, err
	}
	sess := &session{id: o.ID, pending: &newSession{c: o.Client, model: o.Model, poll: o.Poll}}
	if o.Prompt == "" {
		return sess, []string{"A new session: it starts with your first message."}, nil
	}
	s, err := sess.pending.start(ctx, sess.id, o.Prompt)
	if err != nil {
		return nil, nil, err
	}
	sess.s, sess.pending = s, nil
	return sess, []string{startedLine(o.ID)}, nil
}

// newID is the workflow id of a new chat session.
func newID() string { return "chat-" + uuid.NewString() }

// newSession is what starts a session that does not exist yet, at its
// first message (see the package doc).
type newSession struct {
	c     *client.Client
	model string        // its model reference; empty leaves it to the worker
	poll  time.Duration // how often the line mode watches it once started
}

// start starts session id with prompt as its first message: its first turn
// answers it, as it would a message sent.
func (n newSession) start(ctx context.Context, id, prompt string) (*client.Session, error) {
	s, err := n.c.Start(ctx, api.AgentInput{Model: n.model, Prompt: prompt}, client.StartOptions{ID: id})
	if unanswered(err) {
		// The SDK's words ("context deadline exceeded") do not say whose.
		return nil, fmt.Errorf("the Temporal server did not answer (%w)", err)
	}
	return s, err
}

// unanswered says err is the server's silence: it is down, or unreachable.
func unanswered(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, new(*serviceerror.DeadlineExceeded)) ||
		errors.As(err, new(*serviceerror.Unavailable))
}

// startedLine says that session id now exists, and how to come back to it.
func startedLine(id string) string {
	return fmt.Sprintf("New session %s; it outlives this client (starter chat --id %s comes back to it).", id, id)
}

// leftLine is the last line of a chat left once its session started.
func leftLine(sess *session) string {
	if sess.stops {
		return fmt.Sprintf("Left session %s; the server stopped with this client, so the session waits in its database "+
			"until a server runs again: starter chat --id %s (or worker --dev) takes it up.", sess.id, sess.id)
	}
	return fmt.Sprintf("Left session %s; it goes on. Come back with: starter chat --id %s", sess.id, sess.id)
}

// leftUnstarted is the last line of a chat left before its first message.
const leftUnstarted = "Left; nothing was sent, so no session was started."

// errNotStarted is what a command that needs the session says before its
// first message.
var errNotStarted = errors.New("no session yet: it starts with your first message")

// needs says whether command cmd needs the session to exist (to read it or
// to act on it).
func needs(cmd string) bool {
	switch cmd {
	case "help", "quit", "clear", "model":
		return false
	}
	return true
}

func isTerminal(v any) bool {
	f, ok := v.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(f.Fd())
}
