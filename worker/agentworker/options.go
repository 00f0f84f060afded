package agentworker

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/activities/tools"
)

// DefaultModel is the model of runs whose input names none, unless the
// worker's TODOFLOW_MODEL says otherwise.
const DefaultModel = "openai:gpt-4o-mini"

// Options configure a worker. The zero value is the worker binary's
// defaults.
type Options struct {
	// TaskQueue is the queue to poll; empty means api.TaskQueue.
	TaskQueue string
	// Tools are the tools models may call; nil means the built-ins. The
	// MCP servers' tools are added to it.
	Tools *tools.Registry
	// StateDir holds the workspaces of runs that name none; empty means
	// StateDir().
	StateDir string
	// DefaultModel is used when a run's input names no model; empty means
	// $TODOFLOW_MODEL, else DefaultModel.
	DefaultModel string
	// MCPConfig is the MCP configuration file whose servers' tools the
	// worker offers (see package activities/mcp); empty means
	// $TODOFLOW_MCP_CONFIG, and no MCP servers when that is unset too. A
	// bad file makes New fail, naming the file and the server.
	MCPConfig string
	// Logger receives what the MCP servers do (started, stopped, a tool
	// that cannot be offered); nil means slog.Default().
	Logger *slog.Logger
	// Worker are the SDK worker's own options (concurrency, interceptors),
	// passed as they are, except that MaxHeartbeatThrottleInterval 0 means
	// HeartbeatThrottle and that the reply stream server's URL is added to
	// Identity (the SDK's "pid@host@" when empty).
	Worker worker.Options
	// StreamAddr is where the worker serves the replies of its running
	// model calls to the clients that watch them (HOST:PORT; a PORT alone
	// binds 127.0.0.1; "off" serves none, and clients see the replies in
	// steps of seconds, through the heartbeats); empty means
	// $TODOFLOW_STREAM_ADDR, else a free port on 127.0.0.1. See package
	// internal/replystream.
	StreamAddr string
	// StreamURL is the stream server's address as clients reach it
	// (http://HOST:PORT, https:// with StreamCert), when not the one it
	// listens on; empty means $TODOFLOW_STREAM_URL, else the address
	// listened on.
	StreamURL string
	// StreamCert and StreamKey are PEM files of the certificate and key
	// the stream server serves HTTPS with; empty means
	// $TODOFLOW_STREAM_CERT and $TODOFLOW_STREAM_KEY, and plain HTTP when
	// those are unset too. Clients trust the system's authorities and the
	// certificates of the file TODOFLOW_STREAM_CA names.
	StreamCert, StreamKey string
	// DataConverter is c's data converter, with which the activities
	// decode the run's history (where they read the transcript back) and
	// the reply streams seal their frames; nil means the one
	// TODOFLOW_PAYLOAD_KEY makes (as Dial does), else the SDK's default. A
	// worker dialed with a codec of its own must be given it here.
	DataConverter converter.DataConverter
	// ToolOutputMax is how many bytes of a tool's output the model reads
	// (the rest is cut, with a line saying so); 0 means
	// $TODOFLOW_TOOL_OUTPUT_MAX, else activities.DefaultToolOutputMax.
	ToolOutputMax int
	// TranscriptCacheBytes bounds the worker's copy of the transcripts its
	// model calls were sent, which spares most reads of a run's history
	// (see transcript.Cache): 0 means transcript.DefaultCacheBytes, a
	// negative value no cache.
	TranscriptCacheBytes int64
	// AnswerCacheBytes bounds the worker's copy of its model calls'
	// answers, which the next attempt of a call whose completion was not
	// recorded returns instead of asking the provider again (see
	// activities.AnswerCache): 0 means activities.DefaultAnswerCacheBytes,
	// a negative value no cache.
	AnswerCacheBytes int64
	// Encrypted says the client seals payloads (see package codec), so the
	// workflow keeps todo text out of the search attributes, which the
	// server stores in the clear. It is set when TODOFLOW_PAYLOAD_KEY is.
	Encrypted bool
	// HostQueue is the task queue of this worker's workspaces, which it
	// polls for the tool calls of the sessions whose workspace it holds;
	// empty means $TODOFLOW_HOST_QUEUE, else the name kept in the state
	// folder (see HostQueue).
	HostQueue string
	// WorkspaceRoots are the absolute folders a run's `workspace` may name
	// a folder inside (see tools.Roots); nil means
	// $TODOFLOW_WORKSPACE_ROOTS, else <StateDir>/workspaces.
	WorkspaceRoots []string
	// VCSWrites lets write_file write inside .git and the other version
	// control metadata folders, which it refuses otherwise.
	VCSWrites bool
	// ScriptDir, when set, makes the worker serve script: models, reading
	// scenario files inside that folder only (see package model/script);
	// empty means $TODOFLOW_SCRIPT_DIR, and no script: models when that
	// is unset too. Tests, the demo and scenario runs set it; a production
	// worker has no use for it, and without it a run's input or a model
	// cannot make the worker read a file by naming it as a model.
	ScriptDir string
	// SubagentModels are the models (path.Match patterns of references) a
	// model may choose for a subagent besides its own; nil means
	// $TODOFLOW_SUBAGENT_MODELS (comma-separated), else none.
	SubagentModels []string
	// Deployment and BuildID make the worker one version of a worker
	// deployment (Temporal's Worker Versioning): the sessions it starts are
	// pinned to that build, to their end, and new sessions go to the
	// deployment's current version (`temporal worker deployment
	// set-current-version`). Both or neither; empty means $TODOFLOW_DEPLOYMENT
	// and $TODOFLOW_BUILD_ID, and with neither the worker is unversioned.
	// The host queue stays unversioned: a tool call goes to the worker that
	// holds the session's files, whatever its build.
	Deployment, BuildID string
}

// Environment variables of the worker's settings.
const (
	// EnvScriptDir is Options.ScriptDir's variable.
	EnvScriptDir = "TODOFLOW_SCRIPT_DIR"
	// EnvVCSWrites is Options.VCSWrites's variable: "1" or "true".
	EnvVCSWrites = "TODOFLOW_VCS_WRITES"
)

// HeartbeatThrottle is the worker's MaxHeartbeatThrottleInterval unless
// Options.Worker sets one: the SDK sends an activity's heartbeats at most
// that often, holding back the ones recorded sooner. It is below the
// activities' own liveness cadence (3.5 s for their 5 s heartbeat
// timeout), so that each of their heartbeats leaves when recorded: the
// SDK's own bound (80% of the timeout, 4 s) would hold some back, leaving
// 1 s instead of 1.5 s before the timeout. Anything else that records a
// heartbeat costs at most one billed action per HeartbeatThrottle.
const HeartbeatThrottle = 3 * time.Second

// EnvToolOutputMax is the environment variable of the worker's tool output
// limit, in bytes.
const EnvToolOutputMax = "TODOFLOW_TOOL_OUTPUT_MAX"

// toolOutputMax is the worker's tool output limit: n when set, else
// $TODOFLOW_TOOL_OUTPUT_MAX, else the default. A value out of bounds is an
// error, so that a typo stops the worker instead of flooding transcripts.
func toolOutputMax(n int) (int, error) {
	source := "ToolOutputMax"
	want := fmt.Sprintf("want a number of bytes from %d to %d (default %d)",
		activities.MinToolOutputMax, activities.MaxToolOutputMax, activities.DefaultToolOutputMax)
	if n == 0 {
		v := strings.TrimSpace(os.Getenv(EnvToolOutputMax))
		if v == "" {
			return activities.DefaultToolOutputMax, nil
		}
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			return 0, fmt.Errorf("%s=%q: %s", EnvToolOutputMax, v, want)
		}
		source = EnvToolOutputMax
	}
	if n < activities.MinToolOutputMax || n > activities.MaxToolOutputMax {
		return 0, fmt.Errorf("%s is %d: %s", source, n, want)
	}
	return n, nil
}

// StateDir is todoflow's state folder: $TODOFLOW_STATE_DIR, else
// $XDG_STATE_HOME/todoflow, else ~/.local/state/todoflow. It holds the
// embedded server's database and the runs' default workspaces.
func StateDir() (string, error) {
	if d := os.Getenv("TODOFLOW_STATE_DIR"); d != "" {
		return filepath.Abs(d)
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "todoflow"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("locating the state folder (set TODOFLOW_STATE_DIR): %w", err)
	}
	return filepath.Join(home, ".local", "state", "todoflow"), nil
}

// ServerDB is the embedded server's SQLite file in the state folder, shared by `worker
// --dev` and `starter run` (one at a time: devserver refuses a file in use).
func ServerDB() (string, error) {
	dir, err := StateDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "temporal.db"), nil
}

// workspaceRoots are the worker's workspace roots: opts.WorkspaceRoots,
// else $TODOFLOW_WORKSPACE_ROOTS, else the state folder's workspaces/. The
// roots must be apart from the state folder (its database, the sessions'
// folders), which no run may reach.
func workspaceRoots(opts Options) (tools.Roots, error) {
	dirs, source := opts.WorkspaceRoots, "WorkspaceRoots"
	if dirs == nil {
		if v := os.Getenv(tools.EnvWorkspaceRoots); v != "" {
			dirs, source = filepath.SplitList(v), tools.EnvWorkspaceRoots
		} else {
			dirs = []string{filepath.Join(opts.StateDir, DefaultRootFolder)}
		}
	}
	roots, err := tools.NewRoots(dirs...)
	if err == nil {
		err = roots.CheckStateDir(opts.StateDir)
	}
	if err != nil {
		return tools.Roots{}, fmt.Errorf("%s: %w", source, err)
	}
	return roots, nil
}

// DefaultRootFolder is the workspace root inside the state folder of a
// worker that names none.
const DefaultRootFolder = tools.WorkspacesFolder
