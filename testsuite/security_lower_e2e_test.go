package testsuite

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/todoflow/todoflow/activities/tools"
	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/client"

	tfclient "github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
	"github.com/todoflow/todoflow/worker/agentworker"
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
		run, err := s.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: api.TaskQueue}, api.WorkflowName, in)
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

// Under {"*": "destructive"}, a Go tool that declares no hints is asked
// about before it runs, as MCP's defaults say of a tool that says nothing
// (issue 36: it ran unasked); rejected, it never runs.
func TestDestructiveHoldsToolsWithoutHints(t *testing.T) {
	s := startServer(t)
	var ran atomic.Int32
	reg := tools.DefaultRegistry()
	purge := tools.New(model.ToolSpec{Name: "purge", Description: "Delete the caches.", Parameters: json.RawMessage(`{"type": "object"}`)},
		func(context.Context, tools.Env, json.RawMessage) (string, error) {
			ran.Add(1)
			return "purged", nil
		})
	if err := reg.Register(purge); err != nil {
		t.Fatal(err)
	}
	s.startWorkerWith(t, agentworker.Options{Tools: reg, ScriptDir: "/"})
	sc := writeScenario(t, `{"model": [{"tool_calls": [{"name": "purge", "arguments": {}}]}, {"content": "done"}]}`)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sess, err := tfclient.New(s.c, tfclient.Options{}).Start(ctx, api.AgentInput{Prompt: "clean up", Model: sc.RunInput().Model,
		Todo: todoOff(), Approval: todo.ToolApproval{"*": todo.ApprovalDestructive}}, tfclient.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var st api.State
	waitFor(t, time.Minute, "the call held or the turn ended", func() bool {
		st, err = sess.State(ctx)
		return err == nil && (st.PendingApproval != nil || st.Status == api.StatusWaitingUser)
	})
	if st.PendingApproval == nil || st.PendingApproval.Tool != "purge" {
		t.Fatalf("the turn went on without asking (status %s, pending %+v, the tool ran %d times); want purge held for approval", st.Status, st.PendingApproval, ran.Load())
	}
	if _, err := sess.Reject(ctx, tfclient.Answer{CallID: st.PendingApproval.CallID, Feedback: "not now"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "the turn's end", func() bool {
		st, err = sess.State(ctx)
		return err == nil && st.Status == api.StatusWaitingUser
	})
	if n := ran.Load(); n != 0 {
		t.Errorf("purge ran %d times; want none, the call was rejected", n)
	}
	if err := sess.End(ctx); err != nil {
		t.Fatal(err)
	}
}

// A run's file reporter writes its own session's file only (issue 36: a
// run naming another's path appended to that session's report): two
// sessions whose reporters name the same path write two files, each with
// its own session's events alone.
func TestFileReportsStayInTheirSession(t *testing.T) {
	s := startServer(t)
	state := t.TempDir()
	s.startWorker(t, state)
	sc := writeScenario(t, `{"input": {"prompt": "Ship it.", "todo": {"plan_approval": "auto"},
	    "reporters": [{"type": "file", "config": {"path": "events.jsonl"}}]},
	  "model": [
	    {"tool_calls": [{"name": "createPlan", "arguments": {"title": "Ship", "steps": ["Build"]}}]},
	    {"tool_calls": [{"name": "startPlan", "arguments": {}}]},
	    {"tool_calls": [{"name": "setStepStatus", "arguments": {"step_id": "step_1", "status": "completed", "result": "Built"}}]},
	    {"tool_calls": [{"name": "completePlan", "arguments": {"status": "completed", "summary": "Shipped"}}]},
	    {"content": "Shipped."}]}`)
	runs := map[string]bool{}
	for range 2 {
		out, _ := play(t, s.c, sc, 2*time.Minute)
		if out.RunStatus != "completed" {
			t.Fatalf("run %s: %s", out.RunStatus, out.Error)
		}
		runs[out.WorkflowID] = true
	}
	files := map[string]string{} // file → the workflow whose events it holds
	err := filepath.WalkDir(filepath.Join(state, "reports"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for line := range strings.Lines(string(data)) {
			var rec struct {
				WorkflowID string `json:"workflow_id"`
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			if w, ok := files[path]; ok && w != rec.WorkflowID {
				t.Errorf("%s holds the events of %s and of %s; want one session's", path, w, rec.WorkflowID)
			}
			files[path] = rec.WorkflowID
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(runs) {
		t.Errorf("the reports are %d files (%v); want one per session (%d)", len(files), files, len(runs))
	}
}
