// Package activities holds everything the agent does that touches the world:
// model calls, tool executions and event reporting. The tools themselves,
// their registry and the workspace they are confined to are package
// activities/tools; the MCP servers' tools, package activities/mcp; the
// reporters, package activities/report. Workflows refer to these
// activities by name only (the constants below), so the worker decides which
// implementations run and secrets (API keys, webhook credentials) never leave it.
//
// # Tools
//
// CallModel offers the specs of the worker's tools.Registry that the run's
// input allows ("tools", see todo.Allowed), and RunTool finds a call's tool
// there and checks it against the same restriction, so the workflow needs to
// know nothing of where a tool comes from. RunTool keeps at most
// ToolOutputMax bytes of a tool's output, heartbeats the tool's progress
// (toolbeat.go), and decides from its hints whether an interrupted call is
// sent again or a call held for approval (resend.go). A session's tool calls
// all go to the worker that holds its workspace (host.go).
package activities

import (
	"github.com/todoflow/todoflow/activities/tools"
	"github.com/todoflow/todoflow/internal/replystream"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/transcript"
)

// ModelResolver returns the client for a model reference from a workflow input
// ("openai:gpt-4o-mini", "script:/path/scenario.json#agent") and the name to put
// in the request (the reference with its prefix removed).
type ModelResolver func(ref string) (model.Client, string, error)

// Activities carries what the activities need from the worker process. One
// value is registered per worker; its methods are the activities.
type Activities struct {
	// Models resolves a workflow's model reference to a client.
	Models ModelResolver
	// Tools are the tools a model may call besides the workflow's own.
	Tools *tools.Registry
	// StateDir is the worker's state folder; runs without an explicit
	// workspace get a folder under StateDir/sessions.
	StateDir string
	// Roots are the folders a run's `workspace` may name a folder in (see
	// tools.Roots); the zero value allows none.
	Roots tools.Roots
	// VCSWrites lets write_file write inside version control metadata
	// (.git and the like), which it refuses otherwise: a hook or a config
	// written there runs the model's commands at a person's next `git
	// status`.
	VCSWrites bool
	// ToolOutputMax is how many bytes of a tool's output RunTool keeps
	// (DefaultToolOutputMax when 0, at least MinToolOutputMax).
	ToolOutputMax int
	// HostQueue is the task queue this worker polls, besides the shared
	// one, for the tool calls of the sessions whose workspace it holds
	// (WorkspaceHost); the workers that share its state folder poll it
	// too. Empty: the worker holds no workspace, and WorkspaceHost fails.
	HostQueue string
	// SubagentModels are the models (path.Match patterns of references,
	// such as "openai:gpt-4o-mini" or "openai:*") a model may choose for
	// a subagent besides its own; empty allows none but its own. A run's
	// starter names its model; the model, which reads whatever a file says,
	// must not pick an expensive one, or a scripted one.
	SubagentModels []string
	// Namespace is the namespace whose runs' transcripts are read when a
	// method is called outside an activity (an activity reads its own
	// run's).
	Namespace string
	// Transcripts reads the calling run's transcript for CallModel and
	// RunTool: from the worker's cache, then the run's history (package
	// transcript). nil: a call that names spans of a transcript fails.
	Transcripts *transcript.Reader
	// Answers, when set, keeps the model's answers, so that the next
	// attempt of a call whose completion was not recorded returns the
	// answer it got instead of asking the provider again (see
	// AnswerCache); nil asks every attempt.
	Answers *AnswerCache
	// Streams, when set, serves the reply of each running CallModel to the
	// clients that watch it (see stream.go); the worker must run under
	// Streams.Identity, which tells the clients where. nil: clients see a
	// preview in the heartbeat details only.
	Streams *replystream.Server
}

// EnvSubagentModels is the environment variable of the worker's
// SubagentModels: patterns separated by commas.
const EnvSubagentModels = "TODOFLOW_SUBAGENT_MODELS"
