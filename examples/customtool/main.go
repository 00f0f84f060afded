// Command customtool is a todoflow worker of your own: the stock agent, its
// built-in tools, a Go tool of this program (word_count) and, when
// --mcp-config or TODOFLOW_MCP_CONFIG names a file, the tools of MCP servers.
// It is what `go run ./worker` runs, with one tool more, and the way to add
// tools without a fork: import the packages, register, run.
//
//	go run ./examples/customtool --mcp-config mcp.json
//	go run ./starter start --id words "How many words are in the README's first line?"
//
// It connects as the worker binary does (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE
// or the active profile, else localhost:7233) and polls the todoflow task
// queue; run it instead of the stock worker, or on a task queue of its own.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/todoflow/todoflow/activities/tools"
	"github.com/todoflow/todoflow/api"

	sdklog "go.temporal.io/sdk/log"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/worker/agentworker"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "customtool:", err)
		os.Exit(1)
	}
}

// wordCount is the tool's spec: what the model reads to decide to call it.
var wordCount = model.ToolSpec{
	Name:        "word_count",
	Description: "Count the words of a text.",
	Parameters: json.RawMessage(`{
		"type": "object",
		"properties": {"text": {"type": "string", "description": "The text to count."}},
		"required": ["text"],
		"additionalProperties": false
	}`),
}

// countWords runs on the worker, inside the RunTool activity. An error is
// shown to the model, which may correct its call.
func countWords(_ context.Context, _ tools.Env, raw json.RawMessage) (string, error) {
	var args struct{ Text string }
	if err := tools.DecodeArgs(wordCount, raw, &args); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d words", len(strings.Fields(args.Text))), nil
}

func run() error {
	mcpConfig := flag.String("mcp-config", "", "MCP servers' configuration `FILE` (default $TODOFLOW_MCP_CONFIG)")
	taskQueue := flag.String("task-queue", api.TaskQueue, "task queue to poll")
	flag.Parse()

	reg := tools.DefaultRegistry()
	// It only reads: a run whose approval is "destructive" lets it run
	// unasked (a tool without hints may destroy, as MCP's defaults say).
	if err := reg.Register(tools.WithHints(tools.New(wordCount, countWords), tools.Hints{ReadOnly: true})); err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	c, namespace, err := agentworker.Dial(ctx, "", "", false, sdklog.NewStructuredLogger(logger))
	if err != nil {
		return err
	}
	defer c.Close()
	return agentworker.Run(ctx, c, namespace, agentworker.Options{
		TaskQueue: *taskQueue,
		Tools:     reg,
		MCPConfig: *mcpConfig,
		Logger:    logger,
	})
}
