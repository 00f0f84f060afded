package api

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/todoflow/todoflow/todo"
)

// Defaults of the input settings (docs/protocol.md).
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
	Reporters []ReporterConfig `json:"reporters,omitempty"`
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
	// TreeKey is the key of the run tree (workflows/tree_key.go), set by a parent for
	// its subagent; a root mints its own.
	TreeKey string `json:"tree_key,omitempty"`
	// Session is the key of the session (activities.SessionKey), which
	// names its folders on the workers, set by a parent for its subagent;
	// a root makes its own from its workflow id and first run id.
	Session string `json:"session,omitempty"`
	// Carry is set only by continue-as-new: the state of the previous run,
	// which only the workflow writes and reads (package workflows, type
	// Carry); to everyone else it is opaque. A null carry is none.
	Carry json.RawMessage `json:"carry,omitempty"`
	// Protocol is the protocol of the build that wrote the input (its
	// client, its parent, or the run it continues); 0, a build from before
	// protocols, or a user's own input (workflows/protocol.go).
	Protocol int `json:"protocol,omitempty"`

	// unknown is what a strict decoding said of an unknown field
	// (strict.go), refused by Settings; ignored, what a lenient one said of
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
		return ErrCarryOnStart
	}
	if in.TreeKey != "" {
		return ErrTreeKeyOfRoot
	}
	if in.Session != "" {
		return ErrSessionOfRoot
	}
	_, err := in.Settings()
	return err
}

// ErrCarryOnStart refuses a carry in the input of a session's first run: a
// carry is the state a run hands its continuation, and one written by
// whoever starts a run would set its transcript, its approvals and the
// children it adopts.
var ErrCarryOnStart = errors.New("carry: set only by a run's continue-as-new, never in the input that starts a session")

// ErrTreeKeyOfRoot refuses a tree key in a root's input: a root mints its
// own (workflows/tree_key.go), and one its starter chose would be known to them.
var ErrTreeKeyOfRoot = errors.New("tree_key: set only by a parent for its subagent, never in the input that starts a session")

// ErrSessionOfRoot refuses a session key in a root's input: one its
// starter chose could name another session's folders.
var ErrSessionOfRoot = errors.New("session: set only by a parent for its subagent, never in the input that starts a session")

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

var agentIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// CheckAgentID refuses an agent id that is not a short name: ids go into
// workflow ids, log lines, terminals and the custom tools' ToolEnv, where
// "../../etc" or a control character must not pass as a name.
func CheckAgentID(id string) error {
	if !agentIDPattern.MatchString(id) {
		return fmt.Errorf("agent_id %q: use 1 to 64 letters, digits, '-' or '_'", id)
	}
	return nil
}

// MinContextTokens is the smallest context.max_tokens accepted: below it
// the tool definitions alone would not fit (twice what a model call counts
// them as, workflows' toolTokens).
const MinContextTokens = 8_000

// The workspace's host (see the package doc, "One workspace per session").
const (
	// DefaultHostWait is how long a tool call waits for the workspace's
	// host to take it (host_wait_s) before it is answered with an error.
	DefaultHostWait = time.Minute
)

// Defaults of the model calls' settings.
const (
	// DefaultModelRetryWindow is how long the server keeps retrying a
	// failing model call before the turn ends with the error.
	DefaultModelRetryWindow = 24 * time.Hour
	// DefaultContextTokens is context.max_tokens' default: the estimated
	// tokens of a request's messages, leaving room in a 128k-token model for
	// the tool definitions and the answer.
	DefaultContextTokens = 100_000
)

// CheckSessionKey refuses what SessionKey cannot have made: a key is used
// as a folder name, and must not be able to name any other folder.
func CheckSessionKey(key string) error {
	if len(key) != 2*sha256.Size || strings.Trim(key, "0123456789abcdef") != "" {
		return fmt.Errorf("session %q: want the 64 hexadecimal digits of a session key", key)
	}
	return nil
}

// Settings is an input with its defaults applied and checked: what a run
// goes by, and what Describe shows of it.
type Settings struct {
	Todo        todo.Settings
	AgentID     string
	MaxTurns    int
	IdleTimeout time.Duration
	// Subagent: the agent is not its tree's root (AgentID is not
	// DefaultAgentID).
	Subagent         bool
	SubagentTimeout  time.Duration
	SubagentGrace    time.Duration
	ModelRetryWindow time.Duration
	MaxTokens        int
	Summarize        bool
	Approval         todo.ToolApproval
	HostWait         time.Duration
}

// Settings checks the input and applies its defaults. Its errors name the field,
// so that a bad `temporal workflow start --input` fails with a clear reason.
func (in AgentInput) Settings() (Settings, error) {
	c := Settings{AgentID: in.AgentID, MaxTurns: in.MaxTurns, IdleTimeout: DefaultIdleTimeout,
		ModelRetryWindow: DefaultModelRetryWindow, MaxTokens: DefaultContextTokens, Summarize: true,
		SubagentTimeout: DefaultSubagentTimeout, SubagentGrace: DefaultSubagentGrace, HostWait: DefaultHostWait}
	if in.unknown != "" {
		return Settings{}, errors.New(in.unknown)
	}
	if c.AgentID == "" {
		c.AgentID = DefaultAgentID
	}
	if err := CheckAgentID(c.AgentID); err != nil {
		return Settings{}, err
	}
	c.Subagent = c.AgentID != DefaultAgentID
	switch {
	case in.MaxTurns < 0:
		return Settings{}, fmt.Errorf("max_turns is %d: want a positive number (default %d)", in.MaxTurns, DefaultMaxTurns)
	case in.MaxTurns == 0:
		c.MaxTurns = DefaultMaxTurns
	}
	// A number of seconds past maxSeconds would overflow time.Duration
	// into a wait that has already passed.
	for _, f := range []struct {
		name string
		v    int
	}{{"idle_timeout_s", in.IdleTimeoutS}, {"subagent_timeout_s", in.SubagentTimeoutS}, {"subagent_grace_s", in.SubagentGraceS}, {"model_retry_window_s", in.ModelRetryWindowS}, {"host_wait_s", in.HostWaitS}} {
		if f.v > maxSeconds {
			return Settings{}, fmt.Errorf("%s is %d: want at most %d seconds (ten years)", f.name, f.v, maxSeconds)
		}
	}
	switch {
	case in.IdleTimeoutS < 0:
		return Settings{}, fmt.Errorf("idle_timeout_s is %d: want a positive number of seconds", in.IdleTimeoutS)
	case in.IdleTimeoutS > 0:
		c.IdleTimeout = time.Duration(in.IdleTimeoutS) * time.Second
	}
	for _, f := range []struct {
		name string
		v    int
		to   *time.Duration
	}{{"subagent_timeout_s", in.SubagentTimeoutS, &c.SubagentTimeout}, {"subagent_grace_s", in.SubagentGraceS, &c.SubagentGrace}, {"host_wait_s", in.HostWaitS, &c.HostWait}} {
		switch {
		case f.v < 0:
			return Settings{}, fmt.Errorf("%s is %d: want a positive number of seconds", f.name, f.v)
		case f.v > 0:
			*f.to = time.Duration(f.v) * time.Second
		}
	}
	switch {
	case in.ModelRetryWindowS < 0:
		return Settings{}, fmt.Errorf("model_retry_window_s is %d: want a positive number of seconds (default %d)", in.ModelRetryWindowS, int(DefaultModelRetryWindow/time.Second))
	case in.ModelRetryWindowS > 0:
		c.ModelRetryWindow = time.Duration(in.ModelRetryWindowS) * time.Second
	}
	// A subagent outlives the model retry window: a provider outage that
	// its model calls wait out must not end it, nor fail every step of
	// the tree that waits on it.
	c.SubagentTimeout = max(c.SubagentTimeout, c.ModelRetryWindow)
	switch {
	case in.Context.MaxTokens < 0 || (in.Context.MaxTokens > 0 && in.Context.MaxTokens < MinContextTokens):
		return Settings{}, fmt.Errorf("context.max_tokens is %d: want at least %d (default %d)", in.Context.MaxTokens, MinContextTokens, DefaultContextTokens)
	case in.Context.MaxTokens > 0:
		c.MaxTokens = in.Context.MaxTokens
	}
	if in.Context.Summarize != nil {
		c.Summarize = *in.Context.Summarize
	}
	switch {
	case len(in.Prompt) > todo.MaxMessageBytes:
		return Settings{}, fmt.Errorf("prompt is %d bytes: at most %d are taken (it stays in every continuation); put longer material in a file the agent reads", len(in.Prompt), todo.MaxMessageBytes)
	case len(in.SystemPrompt) > todo.MaxSystemPromptBytes:
		return Settings{}, fmt.Errorf("system_prompt is %d bytes: at most %d are taken", len(in.SystemPrompt), todo.MaxSystemPromptBytes)
	}
	// The settings go with every continuation and every subagent's input.
	settings := in
	settings.Prompt, settings.SystemPrompt, settings.Carry = "", "", nil
	if b, _ := json.Marshal(settings); len(b) > maxSettingsBytes {
		return Settings{}, fmt.Errorf("the input's settings (all but prompt and system_prompt) take %d bytes of JSON: at most %d are taken", len(b), maxSettingsBytes)
	}
	if in.Depth < 0 || in.Depth > todo.MaxTreeDepth {
		return Settings{}, fmt.Errorf("depth is %d: want 0 (the root) to %d", in.Depth, todo.MaxTreeDepth)
	}
	if in.Context.MaxMessages < 0 {
		return Settings{}, fmt.Errorf("context.max_messages is %d: want 0 (no window) or more", in.Context.MaxMessages)
	}
	if err := checkWorkspace(in); err != nil {
		return Settings{}, err
	}
	if in.Session != "" {
		if err := CheckSessionKey(in.Session); err != nil {
			return Settings{}, err
		}
	}
	if err := CheckModel(in.Model); err != nil {
		return Settings{}, err
	}
	if err := todo.CheckToolPatterns(in.Tools); err != nil {
		return Settings{}, err
	}
	for i, r := range in.Reporters {
		if err := r.Validate(); err != nil {
			return Settings{}, fmt.Errorf("reporters[%d]: %w", i, err)
		}
	}
	if err := in.Approval.Validate(); err != nil {
		return Settings{}, err
	}
	c.Approval = in.Approval
	ts, err := in.Todo.Resolve(c.Subagent)
	if err != nil {
		return Settings{}, err
	}
	c.Todo = ts
	return c, nil
}
