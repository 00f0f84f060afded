// Package agentworker builds a todoflow worker: the activities with the
// worker's model clients and tools, AgentWorkflow, all registered on one
// task queue. The worker binary and the starter's in-process worker (for
// `starter run` on the embedded server) share it, so both run the same code.
package agentworker

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/model/openai"
	"github.com/todoflow/todoflow/model/script"
	"github.com/todoflow/todoflow/workflows"
)

// DefaultModel is the model of runs whose input names none, unless the
// worker's TODOFLOW_MODEL says otherwise.
const DefaultModel = "openai:gpt-4o-mini"

// Options configure a worker.
type Options struct {
	TaskQueue string
	// Tools are the tools models may call; nil means the built-ins.
	Tools *activities.Registry
	// StateDir holds the workspaces of runs that name none.
	StateDir string
	// DefaultModel is used when a run's input names no model.
	DefaultModel string
	// ToolOutputMax is how many bytes of a tool's output the model reads
	// (the rest is cut, with a line saying so); 0 means
	// $TODOFLOW_TOOL_OUTPUT_MAX, else activities.DefaultToolOutputMax.
	ToolOutputMax int
}

// EnvToolOutputMax is the environment variable of the worker's tool output
// limit, in bytes.
const EnvToolOutputMax = "TODOFLOW_TOOL_OUTPUT_MAX"

// New returns a worker for c with AgentWorkflow and its activities.
func New(c client.Client, opts Options) (worker.Worker, error) {
	if opts.TaskQueue == "" {
		opts.TaskQueue = workflows.TaskQueue
	}
	if opts.StateDir == "" {
		dir, err := StateDir()
		if err != nil {
			return nil, err
		}
		opts.StateDir = dir
	}
	if opts.DefaultModel == "" {
		opts.DefaultModel = os.Getenv("TODOFLOW_MODEL")
	}
	if opts.DefaultModel == "" {
		opts.DefaultModel = DefaultModel
	}
	if opts.Tools == nil {
		opts.Tools = activities.DefaultRegistry()
	}
	outputMax, err := toolOutputMax(opts.ToolOutputMax)
	if err != nil {
		return nil, err
	}
	w := worker.New(c, opts.TaskQueue, worker.Options{})
	workflows.Register(w, &activities.Activities{
		Client:        c,
		Models:        NewModels(opts.DefaultModel),
		Tools:         opts.Tools,
		StateDir:      opts.StateDir,
		ToolOutputMax: outputMax,
	})
	return w, nil
}

// toolOutputMax is the worker's tool output limit: n when set, else
// $TODOFLOW_TOOL_OUTPUT_MAX, else the default. A value out of bounds is an
// error, so that a typo stops the worker instead of flooding transcripts.
func toolOutputMax(n int) (int, error) {
	source := "ToolOutputMax"
	if n == 0 {
		v := strings.TrimSpace(os.Getenv(EnvToolOutputMax))
		if v == "" {
			return activities.DefaultToolOutputMax, nil
		}
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			return 0, fmt.Errorf("%s=%q: want a number of bytes from %d to %d (default %d)",
				EnvToolOutputMax, v, activities.MinToolOutputMax, activities.MaxToolOutputMax, activities.DefaultToolOutputMax)
		}
		source = EnvToolOutputMax
	}
	if n < activities.MinToolOutputMax || n > activities.MaxToolOutputMax {
		return 0, fmt.Errorf("%s is %d: want a number of bytes from %d to %d (default %d)",
			source, n, activities.MinToolOutputMax, activities.MaxToolOutputMax, activities.DefaultToolOutputMax)
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

// NewModels resolves the model references of workflow inputs. The OpenAI
// client is built once, on first use, from the worker's environment, so a
// worker that only plays scenarios needs no API key.
func NewModels(defaultRef string) activities.ModelResolver {
	var (
		once     sync.Once
		oa       *openai.Client
		oaErr    error
		scripted = script.New()
	)
	return func(ref string) (model.Client, string, error) {
		if ref == "" {
			ref = defaultRef
		}
		kind, name, ok := strings.Cut(ref, ":")
		if !ok || name == "" {
			return nil, "", fmt.Errorf("want openai:<model name> or script:<scenario file>")
		}
		switch kind {
		case "openai":
			once.Do(func() { oa, oaErr = openai.NewFromEnv() })
			if oaErr != nil {
				return nil, "", oaErr
			}
			return oa, name, nil
		case "script":
			return scripted, name, nil
		}
		return nil, "", fmt.Errorf("unknown model kind %q: want openai or script", kind)
	}
}
