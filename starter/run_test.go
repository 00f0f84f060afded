package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	tfclient "github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/worker/agentworker"
	"github.com/todoflow/todoflow/worker/devserver"
)

// realBinary makes sure the dev server binary is there (.ci/run builds it first); only a
// binary that cannot be had at all skips the test.
func realBinary(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Minute)
	defer cancel()
	bin, err := devserver.BinaryPath(ctx, io.Discard)
	if err != nil {
		t.Skipf("no Temporal CLI binary and it cannot be built here, so no server to run against: %v", err)
	}
	t.Setenv(devserver.EnvBinary, bin) // no PATH or version look-ups in every Start
}

// TestEmbeddedFallsBackWhenTheDatabaseIsInUse runs two embedded servers at once, as two
// `starter run`s (or a run beside `worker --dev`) would: the first keeps its run in the
// state database, the second says in one line that it uses a temporary one, and both
// work. Once the first is gone, the database is free again.
func TestEmbeddedFallsBackWhenTheDatabaseIsInUse(t *testing.T) {
	realBinary(t)
	t.Setenv("TODOFLOW_STATE_DIR", t.TempDir())
	db, err := agentworker.ServerDB()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	var notes1, notes2 strings.Builder
	e1, err := startEmbedded(ctx, &notes1)
	if err != nil {
		t.Fatal(err)
	}
	defer e1.srv.Stop()
	if e1.db != db || strings.Contains(notes1.String(), "in use") {
		t.Errorf("first server: database %q, notes %q; want %s without a note", e1.db, notes1.String(), db)
	}

	e2, err := startEmbedded(ctx, &notes2)
	if err != nil {
		t.Fatalf("second server beside the first: %v", err)
	}
	defer e2.srv.Stop()
	if e2.db != "" {
		t.Errorf("second server uses %q; want a temporary database", e2.db)
	}
	var inUse []string
	for _, line := range strings.Split(notes2.String(), "\n") {
		if strings.Contains(line, "in use") {
			inUse = append(inUse, line)
		}
	}
	if len(inUse) != 1 || !strings.Contains(inUse[0], db) || !strings.Contains(inUse[0], "temporary database") {
		t.Errorf("notes of the second server: %q; want one line naming %s and the temporary database", notes2.String(), db)
	}
	for i, e := range []*embedded{e1, e2} {
		c, err := client.Dial(client.Options{HostPort: e.srv.Address(), Namespace: e.srv.Namespace()})
		if err != nil {
			t.Fatalf("server %d: %v", i+1, err)
		}
		if _, err := c.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
			t.Errorf("server %d: %v", i+1, err)
		}
		c.Close()
	}
	if got := e2.afterwards("wf-1"); !strings.Contains(got, "temporary database") {
		t.Errorf("afterwards() of the temporary database = %q", got)
	}

	if err := e1.srv.Stop(); err != nil {
		t.Fatal(err)
	}
	var notes3 strings.Builder
	e3, err := startEmbedded(ctx, &notes3)
	if err != nil {
		t.Fatal(err)
	}
	defer e3.srv.Stop()
	if e3.db != db {
		t.Errorf("after the first server stopped: database %q; want %s (notes %q)", e3.db, db, notes3.String())
	}
}

// stubModel is an OpenAI-compatible Chat Completions endpoint that answers from a script
// (assistant messages in the wire format) and then with a final "Done.".
type stubModel struct {
	mu      sync.Mutex
	answers []string
}

func (s *stubModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	_, _ = io.Copy(io.Discard, r.Body)
	s.mu.Lock()
	msg := `{"role":"assistant","content":"Done."}`
	if len(s.answers) > 0 {
		msg, s.answers = s.answers[0], s.answers[1:]
	}
	s.mu.Unlock()
	finish := "stop"
	if strings.Contains(msg, "tool_calls") {
		finish = "tool_calls"
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"stub",`+
		`"choices":[{"index":0,"message":%s,"finish_reason":%q}],"usage":{"prompt_tokens":10,"completion_tokens":1,"total_tokens":11}}`, msg, finish)
}

// writeTodos is an assistant message calling write_todos with items "content:status".
func writeTodos(items ...string) string {
	var todos []map[string]string
	for i, it := range items {
		content, status, _ := strings.Cut(it, ":")
		todos = append(todos, map[string]string{"id": fmt.Sprint(i + 1), "content": content, "status": status})
	}
	args, _ := json.Marshal(map[string]any{"todos": todos})
	call, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("call_%d", len(items)), "type": "function",
		"function": map[string]string{"name": "write_todos", "arguments": string(args)}})
	return fmt.Sprintf(`{"role":"assistant","content":null,"tool_calls":[%s]}`, call)
}

// captureOutput runs f with os.Stdout and os.Stderr going to files, and returns what
// was written to each; onStderr, if set, is called with stderr's content so far while f
// runs, every 50 ms.
func captureOutput(t *testing.T, f func(), onStderr func(string)) (stdout, stderr string) {
	t.Helper()
	dir := t.TempDir()
	outF, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	errF, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	saved := [2]*os.File{os.Stdout, os.Stderr}
	os.Stdout, os.Stderr = outF, errF
	done := make(chan struct{})
	var watcher sync.WaitGroup
	if onStderr != nil {
		watcher.Go(func() {
			for {
				select {
				case <-done:
					return
				case <-time.After(50 * time.Millisecond):
				}
				b, _ := os.ReadFile(errF.Name())
				onStderr(string(b))
			}
		})
	}
	func() {
		defer func() { os.Stdout, os.Stderr = saved[0], saved[1] }()
		f()
	}()
	close(done)
	watcher.Wait()
	outF.Close()
	errF.Close()
	o, _ := os.ReadFile(outF.Name())
	e, _ := os.ReadFile(errF.Name())
	return string(o), string(e)
}

// TestRunPrompt runs `starter run --json PROMPT` against a model server: a plain run of
// the workflow (no scenario), ended after its first turn, printed, and kept in the state
// database, where a server started on that file afterwards still finds it.
func TestRunPrompt(t *testing.T) {
	realBinary(t)
	state := t.TempDir()
	t.Setenv("TODOFLOW_STATE_DIR", state)
	t.Setenv("TEMPORAL_ADDRESS", "")
	model := httptest.NewServer(&stubModel{answers: []string{
		writeTodos("Read the notes:in_progress", "Write the summary:pending"),
		writeTodos("Read the notes:completed", "Write the summary:completed"),
	}})
	defer model.Close()
	t.Setenv("OPENAI_BASE_URL", model.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "sk-test")
	t.Setenv("TODOFLOW_MODEL", "openai:stub")

	const id = "prompt-run-1"
	prompt := "Summarise the notes"
	var code int
	start := time.Now()
	stdout, stderr := captureOutput(t, func() {
		code = runCLI([]string{"run", "--json", "--id", id, "--", prompt}, io.Discard, os.Stderr)
	}, nil)
	t.Logf("starter run took %s; stderr:\n%s", time.Since(start), stderr)
	if code != 0 {
		t.Fatalf("exit %d; stdout:\n%s", code, stdout)
	}
	var out struct {
		runOutput
		StateObj api.State `json:"-"`
	}
	if err := json.Unmarshal([]byte(stdout), &out.runOutput); err != nil {
		t.Fatalf("stdout is not the JSON object: %v\n%s", err, stdout)
	}
	if err := json.Unmarshal(out.State, &out.StateObj); err != nil {
		t.Fatal(err)
	}
	if out.WorkflowID != id || out.RunStatus != "completed" || out.Reply != "Done." {
		t.Errorf("workflow_id %q, run_status %q, reply %q; want %s, completed, Done.", out.WorkflowID, out.RunStatus, out.Reply, id)
	}
	if st := out.StateObj; st.Status != api.StatusCompleted || len(st.Todos) != 2 || st.Turns != 1 {
		t.Errorf("final state: status %s, %d todos, %d turns; want completed, 2, 1", st.Status, len(st.Todos), st.Turns)
	}
	var first struct{ Role, Content string }
	if len(out.Messages) < 2 || json.Unmarshal(out.Messages[1], &first) != nil || first.Role != "user" || first.Content != prompt {
		t.Errorf("the transcript does not start with the prompt: %s", out.Messages)
	}
	for _, want := range []string{
		"todoflow: run " + id + " started",
		"[x] Write the summary",
		"todoflow: follow it in the Web UI: http://127.0.0.1:",
		"todoflow: see it in the Web UI: go run ./worker --dev, then open http://localhost:8233/namespaces/default/workflows/" + id,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	if strings.Contains(stderr, "scenario") {
		t.Errorf("a plain prompt run went through the scenario player:\n%s", stderr)
	}

	// The run outlives the process: it is in the state database.
	db, _ := agentworker.ServerDB()
	srv, err := devserver.Start(context.Background(), devserver.Options{DBFile: db, UIPort: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	c, err := client.Dial(client.Options{HostPort: srv.Address(), Namespace: srv.Namespace()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d, err := c.DescribeWorkflowExecution(context.Background(), id, "")
	if err != nil {
		t.Fatalf("the run is not in %s afterwards: %v", db, err)
	}
	if s := d.GetWorkflowExecutionInfo().GetStatus(); s != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Errorf("the run's status in the database: %s", s)
	}
	// What the Web UI shows of it from its start: the prompt and the run's settings.
	desc, err := c.DescribeWorkflow(context.Background(), id, "")
	if err != nil {
		t.Fatal(err)
	}
	summary, err := desc.GetStaticSummary()
	if err != nil || summary != prompt {
		t.Errorf("static summary %q, %v; want the prompt %q", summary, err, prompt)
	}
	details, err := desc.GetStaticDetails()
	if _, want := api.Describe(api.AgentInput{Prompt: prompt}); err != nil || details != want+api.FrameEnd || !strings.Contains(details, "- **Model:** ") {
		t.Errorf("static details %q, %v; want api.Describe's, with api.FrameEnd:\n%s", details, err, want)
	}
}

// TestRunPromptWaitsForAHuman checks that a plain run whose plan needs approval says so,
// with the command that answers it, waits for the answer, and then completes.
func TestRunPromptWaitsForAHuman(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, cl := scriptedServer(ctx, t)

	// Responses of the scripted model (the scenario file format).
	plan := func(name string, args map[string]any) string {
		b, _ := json.Marshal(map[string]any{"tool_calls": []any{map[string]any{"name": name, "arguments": args}}})
		return string(b)
	}
	script := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(script, fmt.Appendf(nil, `{"model": [%s, %s, %s, {"content": "Planned and done."}]}`,
		plan("createPlan", map[string]any{"title": "Ship", "steps": []string{"Build"}}),
		plan("startPlan", map[string]any{"message": "Ready?"}),
		plan("setStepStatus", map[string]any{"step_id": "step_1", "status": "completed", "result": "built"}),
	), 0o644); err != nil {
		t.Fatal(err)
	}

	var progress syncWriter
	approved := make(chan error, 1)
	go func() {
		// The human: answers once the progress view says what to run.
		for !strings.Contains(progress.String(), `run "starter approve wait-1"`) {
			if ctx.Err() != nil {
				approved <- ctx.Err()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		_, err := c.client(cl).Session("wait-1").Approve(ctx, tfclient.Answer{})
		approved <- err
	}()
	p := &promptRun{c: c.client(cl), id: "wait-1", progress: &progress, server: c.address}
	out, err := p.run(ctx, api.AgentInput{Prompt: "Ship it", Model: "script:" + script})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, progress.String())
	}
	if err := <-approved; err != nil {
		t.Fatalf("approve: %v", err)
	}
	if out.RunStatus != "completed" || out.Reply != "Planned and done." || out.outcome() != nil {
		t.Errorf("run_status %q, reply %q, outcome %v\n%s", out.RunStatus, out.Reply, out.outcome(), progress.String())
	}
	if !strings.Contains(progress.String(), "add --address "+c.address) {
		t.Errorf("the hint does not say which server to answer on:\n%s", progress.String())
	}
}

// TestRunUIStaysUp checks `starter run --ui`: after the run the Web UI answers at the
// printed link until Ctrl+C, and then the command ends.
func TestRunUIStaysUp(t *testing.T) {
	realBinary(t)
	t.Setenv("TODOFLOW_STATE_DIR", t.TempDir())
	t.Setenv("TEMPORAL_ADDRESS", "")
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	const marker = "todoflow: the Web UI stays up: "
	var link string
	var once sync.Once
	var code int
	_, stderr := captureOutput(t, func() {
		code = runCLI([]string{"run", "--ui", "--id", "ui-1"}, io.Discard, os.Stderr)
	}, func(errSoFar string) {
		_, rest, ok := strings.Cut(errSoFar, marker)
		if !ok {
			return
		}
		once.Do(func() {
			link, _, _ = strings.Cut(rest, " ")
			resp, err := http.Get(link)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("%s", resp.Status)
				}
			}
			if err != nil {
				t.Errorf("GET %s while the UI stays up: %v", link, err)
			}
			// Ctrl+C: the command's signal handler takes it.
			_ = syscall.Kill(os.Getpid(), syscall.SIGINT)
		})
	})
	if code != 0 {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	if !strings.HasSuffix(link, "/namespaces/default/workflows/ui-1") {
		t.Errorf("link %q; stderr:\n%s", link, stderr)
	}
	if !strings.Contains(stderr, "see it in the Web UI: go run ./worker --dev") {
		t.Errorf("no hint for later after Ctrl+C:\n%s", stderr)
	}
}

// scriptedServer starts the embedded server, with a state folder of t's, and a worker of it
// that serves script: models from any folder, both stopped when t ends, and returns the
// connection to them and its client.
func scriptedServer(ctx context.Context, t *testing.T) (conn, client.Client) {
	t.Helper()
	realBinary(t)
	t.Setenv("TODOFLOW_STATE_DIR", t.TempDir())
	emb, err := startEmbedded(ctx, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emb.srv.Stop() })
	c := conn{address: emb.srv.Address(), namespace: emb.srv.Namespace(), taskQueue: api.TaskQueue, local: true}
	cl, err := c.dialReady(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	w, err := agentworker.New(cl, agentworker.Options{TaskQueue: c.taskQueue, ScriptDir: "/"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return c, cl
}

// syncWriter is a strings.Builder safe for concurrent use.
type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
