package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/todo"
)

// Defaults of the input settings (CONTRACT.md, Input settings).
const (
	DefaultMaxTurns    = 50
	DefaultIdleTimeout = time.Hour
	DefaultAgentID     = "main"
	// DefaultSubagentTimeout limits a subagent's run; DefaultSubagentGrace
	// is how long end_session lets running subagents finish.
	DefaultSubagentTimeout = time.Hour
	DefaultSubagentGrace   = time.Minute
)

// maxSeconds bounds the settings given in seconds: ten years.
const maxSeconds = 10 * 365 * 24 * 3600

// AgentInput is the single input of AgentWorkflow: what a user sends with the
// starter or `temporal workflow start --input`, and, through Carry, what a
// run hands to its continuation. Fields left out take their defaults.
type AgentInput struct {
	// Prompt is the first user message; empty starts a session that waits
	// for send_message or user_message.
	Prompt string `json:"prompt,omitempty"`
	// SystemPrompt is the base prompt; the todo prompt is appended to it.
	SystemPrompt string `json:"system_prompt,omitempty"`
	// Model is "openai:<name>" or "script:<scenario path>[#agent]"; empty
	// means the worker's default model.
	Model string `json:"model,omitempty"`
	// ModelChosen is set by a parent whose model chose Model for this
	// subagent (spawn_subagent's "model"): the worker serves such a model
	// only if its operator allows it (activities.Activities.SubagentModels).
	ModelChosen bool `json:"model_chosen,omitempty"`
	// Workspace is the built-in tools' folder on the worker, inside one of
	// its workspace roots; empty means a folder per run under the worker's
	// state folder.
	Workspace string `json:"workspace,omitempty"`
	// WorkspaceShared says Workspace is on storage that every worker mounts
	// at that path (a network file system, a shared volume): any worker
	// runs the session's tools. Otherwise they all run on one host, the
	// worker that holds the workspace (see WorkspaceHost).
	WorkspaceShared bool `json:"workspace_shared,omitempty"`
	// WorkspaceHost is the task queue of the host whose workspace the
	// session uses (a worker's --host-queue). Empty: the session takes the
	// worker that answers first, when it first runs a tool or starts a
	// subagent. A parent sets it for its subagents, and a run for its
	// continuation.
	WorkspaceHost string `json:"workspace_host,omitempty"`
	// HostWaitS is how long a tool call waits for the workspace's host to
	// take it, in seconds (default 60); then the call is answered with an
	// error saying that the host is not answering.
	HostWaitS int `json:"host_wait_s,omitempty"`
	// MaxTurns caps the model calls per user message, guard and
	// continuation calls included.
	MaxTurns int `json:"max_turns,omitempty"`
	// IdleTimeoutS is how long a session waits for the next user message
	// before it completes, in seconds.
	IdleTimeoutS int `json:"idle_timeout_s,omitempty"`
	// ModelRetryWindowS is how long a failing model call is retried before
	// the turn ends with the error, in seconds (default 86400).
	ModelRetryWindowS int `json:"model_retry_window_s,omitempty"`
	// SubagentTimeoutS limits each subagent's run, continuations included,
	// in seconds (default 3600, and never less than the model retry
	// window, so that an outage the model calls wait out does not end it);
	// the steps that wait on a subagent that timed out fail visibly.
	SubagentTimeoutS int `json:"subagent_timeout_s,omitempty"`
	// SubagentGraceS is how long end_session lets running subagents finish
	// before it cancels them, in seconds (default 60).
	SubagentGraceS int `json:"subagent_grace_s,omitempty"`
	// Reporters deliver plan events (console, file, webhook); secrets are
	// named, never given: the worker's configuration holds them.
	Reporters []activities.ReporterConfig `json:"reporters,omitempty"`
	// Todo configures the todo list and its guards.
	Todo todo.Config `json:"todo"`
	// Context configures what part of the transcript a model call receives.
	Context ContextConfig `json:"context"`
	// AgentID names the agent in its run tree; the root is "main".
	AgentID string `json:"agent_id,omitempty"`
	// Depth is the agent's depth in its tree, set by its parent: the root
	// is at 0. Agents at todo.MaxTreeDepth cannot spawn.
	Depth int `json:"depth,omitempty"`
	// Tools limits the worker's tools this agent is offered and may call:
	// names and path.Match patterns ("read_file", "mcp__orders__*", "*");
	// empty means all.
	Tools []string `json:"tools"`
	// Approval names the tools (or patterns) whose calls wait for a human's
	// approve_tool before they run: "required" or "auto" each. Subagents
	// inherit it.
	Approval todo.ToolApproval `json:"approval,omitempty"`
	// TreeKey is the key of the run tree (tree_key.go), set by a parent for
	// its subagent; a root mints its own.
	TreeKey string `json:"tree_key,omitempty"`
	// Session is the key of the session (activities.SessionKey), which
	// names its folders on the workers, set by a parent for its subagent;
	// a root makes its own from its workflow id and first run id.
	Session string `json:"session,omitempty"`
	// Carry is set only by continue-as-new: the state of the previous run.
	Carry *Carry `json:"carry,omitempty"`
	// Protocol is the protocol of the build that wrote the input (its
	// client, its parent, or the run it continues); 0, a build from before
	// protocols, or a user's own input (protocol.go).
	Protocol int `json:"protocol,omitempty"`

	// unknown is what a strict decoding said of an unknown field
	// (strict.go), refused by resolve; ignored, what a lenient one said of
	// a carry of another protocol, for the log.
	unknown, ignored string
}

// ContextConfig is the `context` part of the input.
type ContextConfig struct {
	// MaxMessages windows the transcript sent to the model; 0 sends it all.
	MaxMessages int `json:"max_messages,omitempty"`
	// MaxTokens is the budget of a request's messages, estimated from their
	// bytes; over it the older messages are compacted (default
	// DefaultContextTokens).
	MaxTokens int `json:"max_tokens,omitempty"`
	// Summarize: a compaction replaces the older messages with a summary
	// written by the model (default true); false only drops them.
	Summarize *bool `json:"summarize,omitempty"`
}

// Carry is the state a run hands to its continuation: one part per
// component of the run, each made by the component's carry method and read
// back by its constructor, so that a component's state crosses with it and
// fit.go can shed it part by part.
type Carry struct {
	// Protocol is the protocol of the build that wrote the carry.
	Protocol int             `json:"protocol,omitempty"`
	Session  SessionCarry    `json:"session"`
	Window   WindowCarry     `json:"window"` // window.go
	Todo     todo.State      `json:"todo"`
	Plans    *todo.PlanState `json:"plans,omitempty"`
	// Inbox is the queue of messages waiting for their turn, the turn
	// handed over where it stood first, and the kept replies (replies.go).
	Inbox     InboxCarry     `json:"inbox"`
	Approvals ApprovalsCarry `json:"approvals"`      // approvals.go
	Tree      *TreeCarry     `json:"tree,omitempty"` // tree.go
	// Published are the search attributes the run last sent, which the
	// continuation inherits.
	Published *PublishedAttrs `json:"published,omitempty"`
	// Reports are the reporters' queues and counts, in the order of
	// AgentInput.Reporters: a reporter that is failing does not hold the
	// handover (reporters.go).
	Reports []CarriedReporter `json:"reports,omitempty"`
}

// SessionCarry is the loop's own part of a carry: its counters, the
// settings the user changed, and how the last turn ended.
type SessionCarry struct {
	Turns        int  `json:"turns"`
	ModelCalls   int  `json:"model_calls"`
	Continuation bool `json:"continuation"`
	Ended        bool `json:"ended,omitempty"`
	// FailedTurn: the last turn ended on a model error; ModelError says which.
	FailedTurn bool        `json:"failed_turn,omitempty"`
	ModelError *ModelError `json:"model_error,omitempty"`
	Usage      Usage       `json:"usage"`
}

// RunningChild is a running subagent handed to a continuation: its end
// reaches the continuation as its tree_end, or, if it dies without one, as
// its deadline (when the server ends it) passing.
type RunningChild struct {
	AgentID    string    `json:"agent_id"`
	WorkflowID string    `json:"workflow_id"`
	Deadline   time.Time `json:"deadline"`
}

// PublishedAttrs are the search attributes a run sent last, as the run
// decided them (TodoCurrent unredacted, see Options.Encrypted).
type PublishedAttrs struct {
	Total     int64  `json:"total"`
	Completed int64  `json:"completed"`
	Current   string `json:"current"`
	Status    string `json:"status"`
}

// Inbound is a user message waiting for its turn.
type Inbound struct {
	Text string `json:"text"`
	// Seq identifies a send_message update waiting for its reply in this
	// run; 0 for signals, the prompt, and a turn whose update was
	// answered that it goes on in a later run.
	Seq int `json:"seq,omitempty"`
	// ReplyTo is the id of the update that started the turn: a turn
	// handed over keeps its reply under it for turn_reply (replies.go).
	ReplyTo string `json:"reply_to,omitempty"`
	// Retry runs the failed last turn again instead of a new message.
	Retry bool `json:"retry,omitempty"`
	// Blocked is a turn handed over in its wait on blocked plan steps,
	// which the continuation takes up first.
	Blocked *BlockedTurn `json:"blocked,omitempty"`
}

// AgentResult is what a finished run returns.
type AgentResult struct {
	AgentID    string      `json:"agent_id"`
	Reply      string      `json:"reply"`
	Turns      int         `json:"turns"`
	ModelCalls int         `json:"model_calls"`
	Todos      []todo.Item `json:"todos"`
	// State is the final state, which a parent records for its subagent.
	State *State `json:"state,omitempty"`
}

// Validate checks an input as AgentWorkflow will, so that a starter can
// refuse a bad one before it starts a run.
func (in AgentInput) Validate() error {
	if in.Carry != nil {
		return errCarryOnStart
	}
	if in.TreeKey != "" {
		return errTreeKeyOfRoot
	}
	if in.Session != "" {
		return errSessionOfRoot
	}
	_, err := resolve(in)
	return err
}

// errCarryOnStart refuses a carry in the input of a session's first run: a
// carry is the state a run hands its continuation, and one written by
// whoever starts a run would set its transcript, its approvals and the
// children it adopts.
var errCarryOnStart = errors.New("carry: set only by a run's continue-as-new, never in the input that starts a session")

// errTreeKeyOfRoot refuses a tree key in a root's input: a root mints its
// own (tree_key.go), and one its starter chose would be known to them.
var errTreeKeyOfRoot = errors.New("tree_key: set only by a parent for its subagent, never in the input that starts a session")

// errSessionOfRoot refuses a session key in a root's input: one its
// starter chose could name another session's folders.
var errSessionOfRoot = errors.New("session: set only by a parent for its subagent, never in the input that starts a session")

// config is an AgentInput with defaults applied and checked.
type config struct {
	in          AgentInput
	todo        todo.Settings
	agentID     string
	maxTurns    int
	idleTimeout time.Duration
	subagent    bool

	subagentTimeout  time.Duration
	subagentGrace    time.Duration
	modelRetryWindow time.Duration
	maxTokens        int
	summarize        bool
	approval         todo.ToolApproval
	hostWait         time.Duration
	// session is the session's key (sessionKey), set at the run's start.
	session string
}

// resolve checks the input and applies defaults. Its errors name the field,
// so that a bad `temporal workflow start --input` fails with a clear reason.
func resolve(in AgentInput) (config, error) {
	c := config{in: in, agentID: in.AgentID, maxTurns: in.MaxTurns, idleTimeout: DefaultIdleTimeout,
		modelRetryWindow: DefaultModelRetryWindow, maxTokens: DefaultContextTokens, summarize: true,
		subagentTimeout: DefaultSubagentTimeout, subagentGrace: DefaultSubagentGrace, hostWait: DefaultHostWait}
	if in.unknown != "" {
		return config{}, errors.New(in.unknown)
	}
	if c.agentID == "" {
		c.agentID = DefaultAgentID
	}
	if err := checkAgentID(c.agentID); err != nil {
		return config{}, err
	}
	c.subagent = c.agentID != DefaultAgentID
	switch {
	case in.MaxTurns < 0:
		return config{}, fmt.Errorf("max_turns is %d: want a positive number (default %d)", in.MaxTurns, DefaultMaxTurns)
	case in.MaxTurns == 0:
		c.maxTurns = DefaultMaxTurns
	}
	// A number of seconds past maxSeconds would overflow time.Duration
	// into a wait that has already passed.
	for _, f := range []struct {
		name string
		v    int
	}{{"idle_timeout_s", in.IdleTimeoutS}, {"subagent_timeout_s", in.SubagentTimeoutS}, {"subagent_grace_s", in.SubagentGraceS}, {"model_retry_window_s", in.ModelRetryWindowS}, {"host_wait_s", in.HostWaitS}} {
		if f.v > maxSeconds {
			return config{}, fmt.Errorf("%s is %d: want at most %d seconds (ten years)", f.name, f.v, maxSeconds)
		}
	}
	switch {
	case in.IdleTimeoutS < 0:
		return config{}, fmt.Errorf("idle_timeout_s is %d: want a positive number of seconds", in.IdleTimeoutS)
	case in.IdleTimeoutS > 0:
		c.idleTimeout = time.Duration(in.IdleTimeoutS) * time.Second
	}
	for _, f := range []struct {
		name string
		v    int
		to   *time.Duration
	}{{"subagent_timeout_s", in.SubagentTimeoutS, &c.subagentTimeout}, {"subagent_grace_s", in.SubagentGraceS, &c.subagentGrace}, {"host_wait_s", in.HostWaitS, &c.hostWait}} {
		switch {
		case f.v < 0:
			return config{}, fmt.Errorf("%s is %d: want a positive number of seconds", f.name, f.v)
		case f.v > 0:
			*f.to = time.Duration(f.v) * time.Second
		}
	}
	switch {
	case in.ModelRetryWindowS < 0:
		return config{}, fmt.Errorf("model_retry_window_s is %d: want a positive number of seconds (default %d)", in.ModelRetryWindowS, int(DefaultModelRetryWindow/time.Second))
	case in.ModelRetryWindowS > 0:
		c.modelRetryWindow = time.Duration(in.ModelRetryWindowS) * time.Second
	}
	// A subagent outlives the model retry window: a provider outage that
	// its model calls wait out must not end it, nor fail every step of
	// the tree that waits on it.
	c.subagentTimeout = max(c.subagentTimeout, c.modelRetryWindow)
	switch {
	case in.Context.MaxTokens < 0 || (in.Context.MaxTokens > 0 && in.Context.MaxTokens < minContextTokens):
		return config{}, fmt.Errorf("context.max_tokens is %d: want at least %d (default %d)", in.Context.MaxTokens, minContextTokens, DefaultContextTokens)
	case in.Context.MaxTokens > 0:
		c.maxTokens = in.Context.MaxTokens
	}
	if in.Context.Summarize != nil {
		c.summarize = *in.Context.Summarize
	}
	switch {
	case len(in.Prompt) > todo.MaxMessageBytes:
		return config{}, fmt.Errorf("prompt is %d bytes: at most %d are taken (it stays in every continuation); put longer material in a file the agent reads", len(in.Prompt), todo.MaxMessageBytes)
	case len(in.SystemPrompt) > todo.MaxSystemPromptBytes:
		return config{}, fmt.Errorf("system_prompt is %d bytes: at most %d are taken", len(in.SystemPrompt), todo.MaxSystemPromptBytes)
	}
	// The settings go with every continuation and every subagent's input.
	settings := in
	settings.Prompt, settings.SystemPrompt, settings.Carry = "", "", nil
	if b, _ := json.Marshal(settings); len(b) > maxSettingsBytes {
		return config{}, fmt.Errorf("the input's settings (all but prompt and system_prompt) take %d bytes of JSON: at most %d are taken", len(b), maxSettingsBytes)
	}
	if in.Depth < 0 || in.Depth > todo.MaxTreeDepth {
		return config{}, fmt.Errorf("depth is %d: want 0 (the root) to %d", in.Depth, todo.MaxTreeDepth)
	}
	if in.Context.MaxMessages < 0 {
		return config{}, fmt.Errorf("context.max_messages is %d: want 0 (no window) or more", in.Context.MaxMessages)
	}
	if err := checkWorkspace(in); err != nil {
		return config{}, err
	}
	if in.Session != "" {
		if err := activities.CheckSessionKey(in.Session); err != nil {
			return config{}, err
		}
	}
	if err := CheckModel(in.Model); err != nil {
		return config{}, err
	}
	if err := todo.CheckToolPatterns(in.Tools); err != nil {
		return config{}, err
	}
	for i, r := range in.Reporters {
		if err := r.Validate(); err != nil {
			return config{}, fmt.Errorf("reporters[%d]: %w", i, err)
		}
	}
	if err := in.Approval.Validate(); err != nil {
		return config{}, err
	}
	c.approval = in.Approval
	ts, err := in.Todo.Resolve(c.subagent)
	if err != nil {
		return config{}, err
	}
	c.todo = ts
	return c, nil
}

// CheckModel checks the form of a model reference ("" is the worker's
// default); whether a worker serves it is the worker's to say.
func CheckModel(ref string) error {
	if ref != "" && !strings.HasPrefix(ref, "openai:") && !strings.HasPrefix(ref, "script:") {
		return fmt.Errorf("model %q: want openai:<model name> or script:<scenario file>", ref)
	}
	return nil
}

// checkWorkspace checks the settings of where the tools run.
func checkWorkspace(in AgentInput) error {
	switch h := in.WorkspaceHost; {
	case in.WorkspaceShared && in.Workspace == "":
		return errors.New("workspace_shared is true but workspace is empty: name the folder that every worker mounts at the same path")
	case in.WorkspaceShared && h != "":
		return fmt.Errorf("workspace_shared and workspace_host %q exclude each other: a shared workspace runs its tools on any worker", h)
	case h != "":
		if err := CheckHostQueue(h); err != nil {
			return fmt.Errorf("workspace_host %w", err)
		}
	}
	return nil
}

// CheckHostQueue checks the name of a worker's host queue: a task queue
// name the server takes, without spaces or control characters, which would
// only be typing mistakes.
func CheckHostQueue(name string) error {
	switch {
	case name == "":
		return errors.New("is empty")
	case len(name) > maxQueueName:
		return fmt.Errorf("is %d bytes long: a task queue name has at most %d", len(name), maxQueueName)
	case strings.ContainsFunc(name, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }):
		return fmt.Errorf("%q: a host queue has no spaces or control characters", name)
	}
	return nil
}

// maxSettingsBytes is what an input may take besides its prompt, system
// prompt and carry: tool patterns, reporters, todo settings, names.
const maxSettingsBytes = 64 << 10

// maxQueueName is the longest task queue name the server takes.
const maxQueueName = 1000
