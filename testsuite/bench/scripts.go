package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/todoflow/todoflow/api"
)

// The scripted model's answers (model/script): a file per workload, read by
// the worker, which answers call N with response N.

// The run the ratio is measured on: 9 model calls and 6 tool calls, as in
// the issue: a write_todos, six write_file calls (RunTool activities), a
// write_todos that completes the list, and the final answer.
const (
	runModelCalls = 9
	runToolCalls  = 6
	runActivities = runModelCalls + runToolCalls
)

func toolCall(name string, args any) map[string]any {
	return map[string]any{"tool_calls": []any{map[string]any{"name": name, "arguments": args}}}
}

func todos(status string) map[string]any {
	return map[string]any{"todos": []any{map[string]string{"content": "Write the six files", "status": status}}}
}

func runScript() []any {
	out := []any{toolCall("write_todos", todos("in_progress"))}
	for i := 1; i <= runToolCalls; i++ {
		out = append(out, toolCall("write_file", map[string]string{"path": fmt.Sprintf("f%d.txt", i), "content": fmt.Sprintf("file %d\n", i)}))
	}
	return append(out, toolCall("write_todos", todos("completed")), map[string]any{"content": "Done: six files written."})
}

// chatScript answers every turn of a chat session with a write_todos and a
// reply, as the durable-sessions measurements did (BENCHMARKS.md).
func chatScript(turns int) []any {
	var out []any
	for i := 1; i <= turns; i++ {
		out = append(out,
			toolCall("write_todos", map[string]any{"todos": []any{map[string]string{"content": fmt.Sprintf("Answer message %d", i), "status": "completed"}}}),
			map[string]any{"content": chatReply(i)})
	}
	return out
}

// chatReply is chatScript's reply to turn n.
func chatReply(n int) string { return fmt.Sprintf("Answer %d: done.", n) }

// idleScript answers a session's turn, and the one that wakes it.
func idleScript() []any {
	return []any{map[string]any{"content": "Hello; I am here when you need me."}, map[string]any{"content": "Still here."}}
}

// writeScript writes a scenario file with the model's answers and returns
// the model reference of the runs that use it.
func writeScript(dir, name string, responses []any) (string, error) {
	b, err := json.Marshal(map[string]any{"name": name, "input": map[string]any{}, "model": responses})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, name+".json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return "", err
	}
	return "script:" + path, nil
}

// runInput is the input of one measured run: the prompt, the script, and
// the run's own workspace under the worker's state folder.
//
// With shared set, the run's workspace is a folder of its own under shared,
// marked as storage every worker mounts (workspace_shared): its tool calls
// then run on the workflow's task queue, on any worker, instead of the
// host queue of the worker that holds the workspace.
func runInput(model, id, shared string) api.AgentInput {
	in := api.AgentInput{Prompt: "Write the six files f1.txt to f6.txt.", Model: model}
	if shared != "" {
		in.Workspace, in.WorkspaceShared = filepath.Join(shared, id), true
	}
	return in
}
