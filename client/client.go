package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/todoflow/todoflow/api"

	"github.com/google/uuid"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
)

// Client starts sessions and attaches to them. It wraps a Temporal client
// that the caller dialled (with its own address, namespace, TLS, codec and
// interceptors) and closes; it holds no connection of its own. A Client is
// safe for concurrent use, and one per process is enough.
type Client struct {
	tc   sdkclient.Client
	opts Options

	mu       sync.Mutex
	sessions map[string]*Session
}

// Options configure a Client; the zero value serves the default task queue.
type Options struct {
	// TaskQueue is the todoflow workers' task queue, where Start starts
	// sessions; empty means api.TaskQueue.
	TaskQueue string
	// DataConverter decodes what Watch reads outside the workflow's
	// answers: a reply's stream from its worker and the heartbeat details
	// that preview it. Give the Temporal client's own (with
	// TODOFLOW_PAYLOAD_KEY, the sealing one); nil means the SDK's default.
	DataConverter converter.DataConverter
	// Namespace is the namespace the Temporal client was dialled with, for
	// the requests that name it (Rewind's reset); empty means "default".
	Namespace string
	// Address is the server's HOST:PORT the Temporal client was dialled
	// with, named when the server does not answer (ServerDownError) and in
	// the command that starts a worker (NoWorkerError); empty names none.
	Address string
}

// New is a Client over tc.
func New(tc sdkclient.Client, o Options) *Client {
	o.TaskQueue = cmp.Or(o.TaskQueue, api.TaskQueue)
	o.Namespace = cmp.Or(o.Namespace, sdkclient.DefaultNamespace)
	if o.DataConverter == nil {
		o.DataConverter = converter.GetDefaultDataConverter()
	}
	return &Client{tc: tc, opts: o, sessions: map[string]*Session{}}
}

// Errors of a request to a session the server cannot serve.
var (
	// ErrNoSession says a workflow id names no session on the server.
	ErrNoSession = errors.New("no such session")
	// ErrEnded says the session has ended and takes no more requests
	// (its state and transcript can still be read).
	ErrEnded = errors.New("the session has ended")
)

// StartOptions tune Start; the zero value starts a session with a fresh id.
type StartOptions struct {
	// ID is the session's workflow id; empty means todoflow-<uuid>.
	ID string
	// Summary and Details are what the Web UI shows of the run from its
	// start on; empty means api.Describe of the input.
	Summary, Details string
}

// Start starts a session (an AgentWorkflow run) with in. A prompt in the
// input is its first message; without one the session waits for Send.
//
// An input the workflow would refuse is refused here, before a run starts
// and fails on it.
func (c *Client) Start(ctx context.Context, in api.AgentInput, o StartOptions) (*Session, error) {
	// The input is this build's, whatever the caller wrote: a worker of
	// another protocol refuses it by that (workflows/protocol.go).
	in.Protocol = api.Protocol
	if err := in.Validate(); err != nil {
		return nil, fmt.Errorf("session input: %w", err)
	}
	o.ID = cmp.Or(o.ID, "todoflow-"+uuid.NewString())
	summary, details := api.Describe(in)
	summary, details = cmp.Or(o.Summary, summary), cmp.Or(o.Details, details)
	run, err := c.tc.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{
		ID: o.ID, TaskQueue: c.opts.TaskQueue, StaticSummary: summary, StaticDetails: details + api.FrameEnd,
		// The memo keeps the summary for the runs the session continues
		// in: the SDK carries a run's memo to its continuation (with no
		// command), and has no static summary for a continued run.
		Memo: map[string]any{api.MemoSummary: summary},
		// The run need not upsert what it starts with.
		TypedSearchAttributes: api.StartSearchAttributes(),
	}, api.WorkflowName, in)
	if err != nil {
		return nil, fmt.Errorf("start session %s: %w", o.ID, err)
	}
	s := c.Session(o.ID)
	s.mu.Lock()
	s.run = run
	s.mu.Unlock()
	return s, nil
}

// Attach is the session id, after checking that the server has it (running
// or ended); an id it does not know is ErrNoSession.
func (c *Client) Attach(ctx context.Context, id string) (*Session, error) {
	s := c.Session(id)
	if _, err := s.describe(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Session is the session id, without asking the server: its methods fail
// with ErrNoSession when there is none. The same id gives the same
// *Session, so that everything a process sends to one session goes through
// one queue, in order (see Session.Send).
func (c *Client) Session(id string) *Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.sessions[id]
	if !ok {
		s = &Session{c: c, id: id}
		c.sessions[id] = s
	}
	return s
}

// describe is the server's description of the session's latest run.
func (s *Session) describe(ctx context.Context) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	d, err := s.c.tc.DescribeWorkflowExecution(ctx, s.id, "")
	if err != nil {
		return nil, s.wrap("describe", err)
	}
	return d, nil
}

// wrap words err of what on s: a session the server does not know is
// ErrNoSession, a refusal by the workflow is a *RefusedError.
func (s *Session) wrap(what string, err error) error {
	if nf, ok := errors.AsType[*serviceerror.NotFound](err); ok {
		if strings.Contains(nf.Message, "already completed") {
			return fmt.Errorf("%s %s: %w", what, s.id, ErrEnded)
		}
		return fmt.Errorf("%s %s: %w", what, s.id, ErrNoSession)
	}
	if r := refusal(err); r != nil {
		return r
	}
	return fmt.Errorf("%s %s: %w", what, s.id, err)
}
