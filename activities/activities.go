// Package activities holds everything the agent does that touches the world:
// model calls, tool executions and event reporting. Workflows refer to these
// activities by name only (the constants below), so the worker decides which
// implementations run and secrets (API keys, webhook credentials) never leave it.
//
// # Tools
//
// The worker's tools live in a Registry: Go tools registered by name
// (the built-ins, a user's own with NewTool) and Sources of tools found at
// run time, each owning the names that start with its prefix (the MCP
// servers of package activities/mcp, as mcp__<server>__<tool>). CallModel
// offers the registry's specs, RunTool finds a call's tool there, so the
// workflow needs to know nothing of where a tool comes from. A run's input
// may restrict the worker's tools it gets ("tools": names and path.Match
// patterns, see todo.Allowed): CallModel offers only those, and RunTool checks
// each call against the restriction its workflow passes.
//
// # What a tool says of itself
//
// A tool may declare hints (ToolHints: read-only, destructive, idempotent;
// an MCP tool's annotations): RunTool sends a call that was interrupted
// after it may have reached the tool again only when they allow it, and
// holds a call that may destroy when the run asks for approval of those
// (hints.go). While a tool runs, RunTool heartbeats a ToolProgress with the
// progress the tool reports (toolbeat.go), which a client watching the
// session shows.
//
// # One workspace per session
//
// With several workers on a task queue, a session's tool calls must all see
// the files its earlier calls wrote. Each worker therefore also polls a host
// queue of its own (Activities.HostQueue, kept in its state folder); a
// session asks WorkspaceHost once, on the shared queue, and sends its
// RunTool calls to the queue of the worker that answered (see package
// workflows). RunTool itself does not know which queue it was taken from;
// RunToolOnHost, sent on the shared queue, runs a call only on the worker
// whose host queue it names, and is refused elsewhere.
//
// # Bounds of the tools
//
// A tool's result enters the transcript, which every later model call sends,
// and workflow history, which Temporal limits per payload. RunTool therefore
// keeps at most Activities.ToolOutputMax bytes of any tool's output
// (DefaultToolOutputMax, 64 KiB), cut where a character begins, and says how
// much it cut; ToolEnv.OutputMax tells a tool that limit, so that read_file
// and list_files answer in pieces that fit, each saying how to go on. The
// built-in tools are confined to the run's workspace, and read_file returns
// UTF-8 text of regular files only.
//
// # Decided on the resolved file
//
// A path's text says little: a checkout may carry a link notes -> .git,
// and a folder may be swapped for a link while a call runs. RunTool
// therefore opens the workspace once per call, as an os.Root reached from
// its root's own handle (Roots.Open, workspace.go), and every tool of the
// call goes through that handle, never the folder's path again.
// write_file follows a path one element at a time through it, links
// included (resolve.go), and refuses version control metadata by where the
// path leads, then checks once the file is open that it is the file the
// path leads to. Roots themselves must be the worker's own and apart from
// its state folder (roots.go, rootperm_unix.go).
package activities

import (
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
	Tools *Registry
	// StateDir is the worker's state folder; runs without an explicit
	// workspace get a folder under StateDir/sessions.
	StateDir string
	// Roots are the folders a run's `workspace` may name a folder in (see
	// Roots); the zero value allows none.
	Roots Roots
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
