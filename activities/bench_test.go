package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/activities/tools"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/transcript"
)

// BenchmarkRunToolWriteFile is one write_file call through RunTool, as an
// agent run of the benchmark (testsuite/bench) makes six of: the workspace
// under the worker's state folder, the file new in it.
func BenchmarkRunToolWriteFile(b *testing.B) {
	a := &Activities{StateDir: filepath.Join(b.TempDir(), "state")}
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		args, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("f%d.txt", i%6+1), "content": fmt.Sprintf("file %d\n", i)})
		res, err := a.RunTool(ctx, RunToolInput{
			WorkflowID: fmt.Sprintf("bench-agent-%d", i/6),
			Call:       model.ToolCall{ID: "c", Name: "write_file", Arguments: args},
		})
		if err != nil || res.IsError {
			b.Fatal(err, res.Content)
		}
	}
}

// BenchmarkCallModelRun is the model calls of one agent run of the benchmark
// (testsuite/bench): nine calls, each sent the messages added since the
// previous one and reading its transcript from the worker's cache, the
// model itself costing nothing.
func BenchmarkCallModelRun(b *testing.B) {
	m := answering{resp: model.Response{ToolCalls: []model.ToolCall{{ID: "c", Name: "write_file", Arguments: json.RawMessage(`{"path":"f1.txt","content":"file 1\n"}`)}}}}
	// Tools and Transcripts as a worker has them (agentworker.New).
	a := &Activities{Models: func(string) (model.Client, string, error) { return m, "m", nil }, Tools: tools.DefaultRegistry(), Transcripts: transcript.NewReader(nil, nil, 0)}
	ctx := context.Background()
	run := 0
	for b.Loop() {
		run++
		msgs := []model.Message{
			{Role: model.RoleSystem, Content: strings.Repeat("You are a careful assistant. ", 40), ToolCalls: []model.ToolCall{}},
			{Role: model.RoleUser, Content: "Write the six files f1.txt to f6.txt.", ToolCalls: []model.ToolCall{}},
		}
		sent := 0
		for call := 1; call <= 9; call++ {
			in := CallModelInput{WorkflowID: fmt.Sprintf("bench-agent-%d", run), RunID: "r", Model: "m", Turn: 1, Call: call,
				Spans: []transcript.Span{{Start: 0, End: len(msgs)}}, New: transcript.NewMessagesOf(msgs, sent, 0), TodoTools: &TodoTools{}, WorkerTools: nil}
			sent = len(msgs)
			resp, err := a.CallModel(ctx, in)
			if err != nil {
				b.Fatal(err)
			}
			msgs = append(msgs, model.Message{Role: model.RoleAssistant, ToolCalls: resp.ToolCalls},
				model.Message{Role: model.RoleTool, ToolCallID: "c", Content: "wrote 7 bytes to f1.txt", ToolCalls: []model.ToolCall{}})
		}
	}
}
