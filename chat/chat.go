package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"
	"github.com/google/uuid"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/todoflow/todoflow/workflows"
)

// Options configure Run. Client is required; the zero value of the rest
// opens a new session on the default task queue, on the process's
// standard input and output.
type Options struct {
	Client client.Client
	// ID is the session's workflow id: an existing session is attached to,
	// a new one is started with it; empty starts one with a fresh id.
	ID string
	// Model is a new session's model reference (openai:…, script:…); empty
	// leaves it to the worker. An existing session keeps its own.
	Model string
	// TaskQueue of the todoflow workers; empty means workflows.TaskQueue.
	TaskQueue string
	// DataConverter decodes the heartbeat details the reply streams in:
	// the client's own converter (with TODOFLOW_PAYLOAD_KEY, the sealing
	// one). nil means the SDK's default.
	DataConverter converter.DataConverter
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
}

// DefaultPoll is how often the client looks at its session: one
// DescribeWorkflowExecution, which the server answers alone, plus the
// state and messages queries when the history has grown.
const DefaultPoll = 100 * time.Millisecond

// Run opens (or attaches to) a session and talks to it until the user
// leaves, the input ends (line mode) or the session ends. Leaving never
// ends the session.
func Run(ctx context.Context, o Options) error {
	if o.Client == nil {
		return errors.New("chat: no Temporal client")
	}
	if o.TaskQueue == "" {
		o.TaskQueue = workflows.TaskQueue
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

	intro, err := open(ctx, &o)
	if err != nil {
		return err
	}
	intro = append(o.Notes, intro...)
	sess := &session{c: o.Client, id: o.ID}
	looks := make(chan any)
	go newWatcher(o.Client, o.ID, o.DataConverter).watch(ctx, o.Poll, looks)

	if o.Plain || !isTerminal(o.In) || !isTerminal(o.Out) {
		return runPlain(ctx, sess, looks, o.In, o.Out, intro)
	}
	intro = append(intro, "/help lists the commands · Ctrl+T shows the checklist · Ctrl+C leaves (the session goes on)")
	p := tea.NewProgram(newUI(ctx, sess, looks, intro), tea.WithContext(ctx), tea.WithInput(o.In), tea.WithOutput(o.Out))
	if _, err := p.Run(); err != nil && !errors.Is(err, tea.ErrProgramKilled) && ctx.Err() == nil {
		return fmt.Errorf("chat: %w", err)
	}
	return nil
}

// open attaches to the session o.ID, or starts it when there is none (with
// a fresh id when o.ID is empty), and returns the lines that say which.
func open(ctx context.Context, o *Options) ([]string, error) {
	if o.ID != "" {
		_, err := o.Client.DescribeWorkflowExecution(ctx, o.ID, "")
		if err == nil {
			lines := []string{fmt.Sprintf("Session %s, attached; its transcript so far:", o.ID)}
			if o.Model != "" {
				lines = append(lines, "(--model applies to new sessions; this one keeps its model)")
			}
			return lines, nil
		}
		if _, ok := errors.AsType[*serviceerror.NotFound](err); !ok {
			return nil, fmt.Errorf("describe session %s: %w", o.ID, err)
		}
	} else {
		o.ID = "chat-" + uuid.NewString()
	}
	_, err := o.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: o.ID, TaskQueue: o.TaskQueue,
		TypedSearchAttributes: workflows.StartSearchAttributes()},
		workflows.WorkflowName, workflows.AgentInput{Model: o.Model})
	if err != nil {
		return nil, fmt.Errorf("start session %s: %w", o.ID, err)
	}
	return []string{fmt.Sprintf("New session %s; it outlives this client (starter chat --id %s comes back to it).", o.ID, o.ID)}, nil
}

func isTerminal(v any) bool {
	f, ok := v.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(f.Fd())
}
