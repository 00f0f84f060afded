package testsuite

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/client"

	"github.com/todoflow/todoflow/worker/agentworker"
)

// The tests of this file play what an attacker tried against a running
// worker: whoever may start a workflow writes its input, and the model
// writes its tool calls; neither may reach past what the worker's operator
// allows (SECURITY.md).

// startWorkerWith runs a worker with opts (its state folder a temporary
// one unless opts names one) until the test ends.
func (s *server) startWorkerWith(t *testing.T, opts agentworker.Options) {
	t.Helper()
	if opts.StateDir == "" {
		opts.StateDir = t.TempDir()
	}
	w, err := agentworker.New(s.c, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatalf("start worker: %v", err)
	}
	t.Cleanup(w.Stop)
}

// A run's input cannot name a workspace outside the worker's roots: the
// run is refused at its start, with the field named, before the model
// reads or writes anything. Inside a root, a relative name works.
func TestInputCannotChooseTheWorkspace(t *testing.T) {
	s := startServer(t)
	state := t.TempDir()
	sc := writeScenario(t, `{"input": {"prompt": "look around"}, "model": [
	  {"tool_calls": [{"name": "read_file", "arguments": {"path": "etc/passwd"}},
	                  {"name": "write_file", "arguments": {"path": "todoflow-was-here.txt", "content": "x"}}]},
	  {"content": "done"}]}`)
	s.startWorkerWith(t, agentworker.Options{StateDir: state, ScriptDir: filepath.Dir(sc.Path)})

	escape := t.TempDir() // a folder the worker's user may write, outside every root
	for _, ws := range []string{"/", escape, "../../outside"} {
		sc.Input.Workspace = ws
		out, _ := play(t, s.c, sc, time.Minute)
		if out.RunStatus != "failed" {
			t.Fatalf("workspace %q: run %s, want failed", ws, out.RunStatus)
		}
		err := s.c.GetWorkflow(context.Background(), out.WorkflowID, "").Get(context.Background(), nil)
		if err == nil || !strings.Contains(err.Error(), "invalid AgentWorkflow input: workspace") {
			t.Errorf("workspace %q: the run ended with %v, want the workspace refused", ws, err)
		}
		if len(out.Messages) > 0 {
			t.Errorf("workspace %q: the run has %d messages, want none", ws, len(out.Messages))
		}
	}
	if _, err := os.Stat(filepath.Join(escape, "todoflow-was-here.txt")); err == nil {
		t.Error("a file was written outside the workspace roots")
	}

	sc.Input.Workspace = "proj"
	out, _ := play(t, s.c, sc, time.Minute)
	if out.RunStatus != "completed" {
		t.Fatalf("workspace proj: run %s: %s", out.RunStatus, out.Error)
	}
	if _, err := os.Stat(filepath.Join(state, agentworker.DefaultRootFolder, "proj", "todoflow-was-here.txt")); err != nil {
		t.Errorf("the write of a run in workspace proj did not land in the root: %v", err)
	}
}

// A model cannot make the worker read /dev/zero (which once took 2-3 GB in
// 25 s and then the worker) by naming it as a model: a production worker
// serves no script: models, one that does reads regular files inside its
// folder only, and a subagent's model chosen by its parent's model is one
// the operator allows.
func TestModelCannotChooseAScriptedModel(t *testing.T) {
	s := startServer(t)
	t.Run("a worker without a script folder", func(t *testing.T) {
		q := "no-scripts"
		s.startWorkerWith(t, agentworker.Options{TaskQueue: q})
		st := failedTurn(t, s.c, q, "script:/dev/zero")
		if !strings.Contains(st.ModelError.Message, "does not serve script: models") {
			t.Errorf("model error %q, want the refusal of script: models", st.ModelError.Message)
		}
	})
	t.Run("a file outside the script folder", func(t *testing.T) {
		q := "scripts"
		s.startWorkerWith(t, agentworker.Options{TaskQueue: q, ScriptDir: t.TempDir()})
		st := failedTurn(t, s.c, q, "script:/dev/zero")
		if !strings.Contains(st.ModelError.Message, "outside the folder") {
			t.Errorf("model error %q, want the refusal of a file outside the folder", st.ModelError.Message)
		}
	})
	t.Run("a subagent's model", func(t *testing.T) {
		sc := writeScenario(t, `{
		  "input": {"prompt": "delegate", "todo": {"finalization_max_corrections": 0}},
		  "model": [
		    {"tool_calls": [{"name": "spawn_subagent", "arguments": {"agent_id": "reader", "task": "read", "model": "script:/dev/zero"}}]},
		    {"content": "done"}]}`)
		s.startWorkerWith(t, agentworker.Options{ScriptDir: filepath.Dir(sc.Path)})
		out, st := play(t, s.c, sc, 2*time.Minute)
		if child := st.Subagents["reader"]; child.Status != api.StatusFailed || child.ModelCalls != 0 {
			t.Errorf("the subagent with a model chosen by the model: %+v, want it failed before any model call", child)
		}
		err := s.c.GetWorkflow(context.Background(), out.WorkflowID+"/reader", "").Get(context.Background(), nil)
		if err == nil || !strings.Contains(err.Error(), "chosen for this subagent") {
			t.Errorf("the subagent ended with %v, want the refusal of a chosen model", err)
		}
	})
}

// failedTurn starts a session on queue with model ref, waits for its first
// turn to fail on the model, ends it and returns its state then.
func failedTurn(t *testing.T, c client.Client, queue, ref string) api.State {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: queue}, api.WorkflowName,
		api.AgentInput{Prompt: "hello", Model: ref})
	if err != nil {
		t.Fatal(err)
	}
	var st api.State
	waitFor(t, time.Minute, "the turn to fail on the model", func() bool {
		var ok bool
		st, ok = queryState(ctx, c, run.GetID())
		return ok && st.Status == api.StatusWaitingUser && st.ModelError != nil
	})
	if err := c.SignalWorkflow(ctx, run.GetID(), "", api.EndSessionSignal, nil); err != nil {
		t.Fatal(err)
	}
	if err := run.Get(ctx, nil); err != nil {
		t.Errorf("the session ended with %v, want it to survive its failed turn", err)
	}
	return st
}

// write_file cannot write .git/config or a hook in a checkout workspace,
// where a person's next `git status` would run what the model wrote; a
// worker whose operator allows it can.
func TestModelCannotWriteVCSMetadata(t *testing.T) {
	s := startServer(t)
	sc := writeScenario(t, `{"input": {"prompt": "configure", "workspace": "repo"}, "model": [
	  {"tool_calls": [{"name": "write_file", "arguments": {"path": ".git/config", "content": "[core]\n\tfsmonitor = sh -c 'touch /tmp/pwned'\n"}},
	                  {"name": "write_file", "arguments": {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"}},
	                  {"name": "write_file", "arguments": {"path": "README.md", "content": "fine"}}]},
	  {"content": "done"}]}`)
	state := t.TempDir()
	repo := filepath.Join(state, agentworker.DefaultRootFolder, "repo")
	if err := os.MkdirAll(filepath.Join(repo, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, ".git", "config"), []byte("[core]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.startWorkerWith(t, agentworker.Options{StateDir: state, ScriptDir: filepath.Dir(sc.Path)})
	out, _ := play(t, s.c, sc, time.Minute)
	results := toolMessages(t, s.c, out.WorkflowID)
	if len(results) != 3 || !results[0].IsError || !results[1].IsError || results[2].IsError {
		t.Fatalf("tool results %+v, want the two writes under .git refused and README.md written", results)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, ".git", "config")); string(b) != "[core]\n" {
		t.Errorf(".git/config = %q, changed by the model", b)
	}
	if _, err := os.Stat(filepath.Join(repo, ".git", "hooks", "pre-commit")); err == nil {
		t.Error("the model wrote a hook")
	}
}

// A checkout may carry a link to its own .git: git recreates `notes ->
// .git` on clone. write_file decides on where a path resolves, so the
// model's notes/config is refused as .git/config is, and the model reads
// why in an error tool message; .git/config is unchanged.
func TestModelCannotWriteVCSMetadataThroughALink(t *testing.T) {
	s := startServer(t)
	sc := writeScenario(t, `{"input": {"prompt": "take notes", "workspace": "repo"}, "model": [
	  {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes/config", "content": "[core]\n\tfsmonitor = sh -c 'touch pwned'\n"}}]},
	  {"content": "done"}]}`)
	state := t.TempDir()
	repo := checkout(t, filepath.Join(state, agentworker.DefaultRootFolder, "repo"))
	if err := os.Symlink(".git", filepath.Join(repo, "notes")); err != nil {
		t.Fatal(err)
	}
	s.startWorkerWith(t, agentworker.Options{StateDir: state, ScriptDir: filepath.Dir(sc.Path)})
	out, _ := play(t, s.c, sc, time.Minute)
	results := toolMessages(t, s.c, out.WorkflowID)
	if len(results) != 1 || !results[0].IsError || !strings.Contains(results[0].Content, `"notes/config" leads inside .git through a symbolic link`) {
		t.Fatalf("tool results %+v, want the write through the link refused, saying why", results)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, ".git", "config")); string(b) != "[core]\n" {
		t.Errorf(".git/config = %q, changed by the model", b)
	}
}

// A run whose workspace is a checkout's .git, named so or through a link,
// is refused at its start, naming why, before the model writes config.
func TestWorkspaceInsideVCSMetadataRefused(t *testing.T) {
	s := startServer(t)
	sc := writeScenario(t, `{"input": {"prompt": "configure"}, "model": [
	  {"tool_calls": [{"name": "write_file", "arguments": {"path": "config", "content": "[core]\n\tfsmonitor = sh -c 'touch pwned'\n"}}]},
	  {"content": "done"}]}`)
	state := t.TempDir()
	root := filepath.Join(state, agentworker.DefaultRootFolder)
	repo := checkout(t, filepath.Join(root, "repo"))
	if err := os.Symlink(filepath.Join("repo", ".git"), filepath.Join(root, "gitlink")); err != nil {
		t.Fatal(err)
	}
	s.startWorkerWith(t, agentworker.Options{StateDir: state, ScriptDir: filepath.Dir(sc.Path)})
	for _, ws := range []string{"repo/.git", "gitlink"} {
		sc.Input.Workspace = ws
		out, _ := play(t, s.c, sc, time.Minute)
		if out.RunStatus != "failed" || len(out.Messages) > 0 {
			t.Fatalf("workspace %q: run %s with %d messages, want it failed at its start", ws, out.RunStatus, len(out.Messages))
		}
		err := s.c.GetWorkflow(context.Background(), out.WorkflowID, "").Get(context.Background(), nil)
		if err == nil || !strings.Contains(err.Error(), "invalid AgentWorkflow input: workspace") || !strings.Contains(err.Error(), "inside .git, version control metadata") {
			t.Errorf("workspace %q: the run ended with %v, want it refused as inside .git", ws, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(repo, ".git", "config")); string(b) != "[core]\n" {
		t.Errorf(".git/config = %q, changed by the model", b)
	}
}

// checkout makes dir a checkout whose .git holds a config of one line,
// and returns it.
func checkout(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", "config"), []byte("[core]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A typo in the input cannot switch a guard off: {"aproval": ...} once
// started a run whose writes needed no approval; now the run is refused at
// its start with the field named, before the model is called. The input is
// sent as the stock temporal CLI sends it, as raw JSON.
func TestUnknownInputFieldRefusedEndToEnd(t *testing.T) {
	s := startServer(t)
	s.startWorkerWith(t, agentworker.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := s.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: api.TaskQueue}, api.WorkflowName,
		json.RawMessage(`{"prompt": "write the release notes", "aproval": {"*": "required"}}`))
	if err != nil {
		t.Fatal(err)
	}
	err = run.Get(ctx, nil)
	if err == nil || !strings.Contains(err.Error(), `unknown field "aproval"`) {
		t.Fatalf("the run ended with %v, want it refused naming the field", err)
	}
	if st, ok := queryState(ctx, s.c, run.GetID()); !ok || st.Status != api.StatusFailed || st.ModelCalls != 0 {
		t.Errorf("state %+v (read: %v), want failed before any model call", st, ok)
	}
}
