package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/term"
	"github.com/google/uuid"

	"github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/workflows"
)

// Options configure Run. Client is required (its task queue is where a new
// session starts; its data converter decodes the streamed reply); the zero
// value of the rest opens a new session on the process's standard input
// and output.
type Options struct {
	Client *client.Client
	// ID is the session's workflow id: an existing session is attached to,
	// a new one is started with it; empty starts one with a fresh id.
	ID string
	// Model is a new session's model reference (openai:…, script:…); empty
	// leaves it to the worker. An existing session keeps its own.
	Model string
	// Prompt is a new session's first message, sent as it starts (the
	// scripted demo's); empty waits for the user's.
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
}

// DefaultPoll is how often the client looks at its session (see
// client.Session.Watch): one DescribeWorkflowExecution, which the server
// answers alone, plus the state and messages queries when the history has
// grown.
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

	s, intro, err := open(ctx, &o)
	if err != nil {
		return err
	}
	intro = append(o.Notes, intro...)
	sess := &session{s: s, id: s.ID()}
	wctx, stopWatch := context.WithCancel(ctx)
	defer func() { stopWatch() }()
	looks := s.Watch(wctx, o.Poll)

	if o.Plain || !isTerminal(o.In) || !isTerminal(o.Out) {
		return runPlain(ctx, sess, looks, o.In, o.Out, intro)
	}
	intro = append(intro, "/help: commands and keys · Ctrl+T: checklist · Alt+Enter: new line · Up: earlier lines · "+
		"Ctrl+C twice: leave (the session goes on)")
	u := newUI(ctx, sess, looks, intro)
	u.prices = o.Prices
	u.client, u.model, u.poll, u.stopWatch = o.Client, o.Model, o.Poll, stopWatch
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

// open attaches to the session o.ID, or starts it when there is none (with
// a fresh id when o.ID is empty), and returns the lines that say which.
func open(ctx context.Context, o *Options) (*client.Session, []string, error) {
	if o.ID != "" {
		s, err := o.Client.Attach(ctx, o.ID)
		if err == nil {
			lines := []string{fmt.Sprintf("Session %s, attached; its transcript so far:", o.ID)}
			if o.Model != "" {
				lines = append(lines, "(--model applies to new sessions; this one keeps its model)")
			}
			return s, lines, nil
		}
		if !errors.Is(err, client.ErrNoSession) {
			return nil, nil, err
		}
	} else {
		o.ID = "chat-" + uuid.NewString()
	}
	s, err := o.Client.Start(ctx, workflows.AgentInput{Model: o.Model, Prompt: o.Prompt}, client.StartOptions{ID: o.ID})
	if err != nil {
		return nil, nil, err
	}
	return s, []string{fmt.Sprintf("New session %s; it outlives this client (starter chat --id %s comes back to it).", o.ID, o.ID)}, nil
}

func isTerminal(v any) bool {
	f, ok := v.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(f.Fd())
}
