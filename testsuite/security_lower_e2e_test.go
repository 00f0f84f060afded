package testsuite

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/workflows"
)

// The lower items of issue 36, played as whoever may start a workflow
// would: names that are paths, ids taken again, files of other sessions.

// A run whose input names its agent "../../etc" is refused at its start,
// the field named, before any model call: an agent id is a short name.
func TestInputAgentIDIsAName(t *testing.T) {
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, id := range []string{"../../etc", "a b", "x\x1b[2J"} {
		// The raw JSON a `temporal workflow start --input` sends: no
		// client-side check comes first.
		in := map[string]any{"prompt": "hi", "agent_id": id}
		run, err := s.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: workflows.TaskQueue}, workflows.WorkflowName, in)
		if err != nil {
			t.Fatal(err)
		}
		err = run.Get(ctx, nil)
		if err == nil || !strings.Contains(err.Error(), "invalid AgentWorkflow input: agent_id") {
			t.Errorf("agent_id %q: the run ended with %v, want it refused naming agent_id", id, err)
		}
	}
}

// A session's files are its own: a new session that takes a closed one's
// workflow id does not find its files, nor does a session whose id the
// old folder name made the same as another's (a 128-byte id spelling a
// longer one's cut name).
func TestSessionFolderIsTheSessionsOwn(t *testing.T) {
	long := strings.Repeat("x", 200)
	sum := sha256.Sum256([]byte(long))
	tests := []struct {
		name           string
		writer, reader string // workflow ids
	}{
		{"a closed session's id taken again", "reused-id", "reused-id"},
		{"an id spelling another's cut folder name", long, strings.Repeat("x", 111) + "-" + hex.EncodeToString(sum[:8])},
	}
	s := startServer(t)
	write := writeScenario(t, `{"input": {"prompt": "keep a secret", "todo": {"enabled": false}}, "model": [
	  {"tool_calls": [{"name": "write_file", "arguments": {"path": "secret.txt", "content": "s3cret"}}]},
	  {"content": "kept"}]}`)
	read := writeScenario(t, `{"input": {"prompt": "look", "todo": {"enabled": false}}, "model": [
	  {"tool_calls": [{"name": "read_file", "arguments": {"path": "secret.txt"}}]},
	  {"content": "looked"}]}`)
	s.startWorker(t, t.TempDir())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if p := <-playAsync(t, s.c, write, tt.writer, 2*time.Minute); p.err != nil || p.out.RunStatus != "completed" {
				t.Fatalf("the writer: %v", p.err)
			}
			p := <-playAsync(t, s.c, read, tt.reader, 2*time.Minute)
			if p.err != nil || p.out.RunStatus != "completed" {
				t.Fatalf("the reader: %v", p.err)
			}
			reads := 0
			for _, raw := range p.out.Messages {
				var m model.Message
				if err := json.Unmarshal(raw, &m); err != nil {
					t.Fatal(err)
				}
				if m.Role != model.RoleTool {
					continue
				}
				reads++
				if !m.IsError || strings.Contains(m.Content, "s3cret") {
					t.Errorf("the reader's read_file answered %q (error %v); want no such file", m.Content, m.IsError)
				}
			}
			if reads != 1 {
				t.Errorf("the reader's run has %d tool messages, want its read_file's", reads)
			}
		})
	}
}
