package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/todoflow/todoflow/activities/tools"
	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/todoflow/todoflow/model"
)

// executeRunTool runs the RunTool activity of a in a test activity
// environment, as a worker would.
func executeRunTool(t *testing.T, a *Activities, in RunToolInput) (RunToolResult, error) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	val, err := env.ExecuteActivity(a.RunTool, in)
	if err != nil {
		return RunToolResult{}, err
	}
	var res RunToolResult
	if err := val.Get(&res); err != nil {
		t.Fatalf("decode result: %v", err)
	}
	return res, nil
}

func toolCall(name, args string) model.ToolCall {
	return model.ToolCall{ID: "call_1", Name: name, Arguments: json.RawMessage(args)}
}

// testTools are the built-ins plus tools that fail in each way a tool can.
func testTools(t *testing.T) *tools.Registry {
	t.Helper()
	reg := tools.DefaultRegistry()
	for _, tool := range []tools.Tool{
		tools.New(model.ToolSpec{Name: "fail"}, func(context.Context, tools.Env, json.RawMessage) (string, error) {
			return "", errors.New("fail: the service said no")
		}),
		tools.New(model.ToolSpec{Name: "flaky"}, func(context.Context, tools.Env, json.RawMessage) (string, error) {
			return "", tools.Retryable(errors.New("flaky: connection reset"))
		}),
		tools.New(model.ToolSpec{Name: "crash"}, func(_ context.Context, _ tools.Env, args json.RawMessage) (string, error) {
			words := strings.Fields(string(args))
			return words[1], nil // a bug: it assumes two words, and {} is one
		}),
		tools.New(model.ToolSpec{Name: "whoami"}, func(_ context.Context, env tools.Env, _ json.RawMessage) (string, error) {
			return fmt.Sprintf("%s %s %s", env.WorkflowID, env.AgentID, env.Workspace.Dir()), nil
		}),
	} {
		if err := reg.Register(tool); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

func TestRunTool(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "ws") // its root beside the state folder
	a := &Activities{Tools: testTools(t), StateDir: t.TempDir(), Roots: testRoots(t, filepath.Dir(ws))}
	tests := []struct {
		name string
		call model.ToolCall
		want RunToolResult
	}{
		{"write", toolCall("write_file", `{"path": "notes/todo.md", "content": "- ship it"}`),
			RunToolResult{Content: "wrote 9 bytes to notes/todo.md", Diff: "@@ -0,0 +1 @@\n+- ship it\n\\ No newline at end of file"}},
		{"read what was written", toolCall("read_file", `{"path": "notes/todo.md"}`),
			RunToolResult{Content: "- ship it"}},
		{"list", toolCall("list_files", `{"recursive": true}`),
			RunToolResult{Content: "notes/\nnotes/todo.md"}},
		{"unknown tool", toolCall("rm_rf", `{}`),
			RunToolResult{Content: `unknown tool "rm_rf"; the tools run by the worker are: crash, fail, flaky, list_files, read_file, whoami, write_file`, IsError: true}},
		{"malformed arguments", toolCall("read_file", `"notes/todo.md"`),
			RunToolResult{Content: `read_file: arguments must be a JSON object, got the string "notes/todo.md"`, IsError: true}},
		{"tool error", toolCall("fail", `{}`),
			RunToolResult{Content: "fail: the service said no", IsError: true}},
		{"confinement", toolCall("read_file", `{"path": "../x"}`),
			RunToolResult{Content: `read_file: path "../x" leads outside the workspace`, IsError: true}},
		{"panic", toolCall("crash", `{}`),
			RunToolResult{Content: "crash: the tool failed unexpectedly (panic: runtime error: index out of range [1] with length 1)", IsError: true}},
		{"environment", toolCall("whoami", `{}`),
			RunToolResult{Content: "wf-1 main " + ws}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := executeRunTool(t, a, RunToolInput{WorkflowID: "wf-1", AgentID: "main", Workspace: ws, Call: tt.call})
			if err != nil {
				t.Fatalf("RunTool failed: %v", err)
			}
			if got != tt.want {
				t.Fatalf("RunTool = %+v\nwant      %+v", got, tt.want)
			}
		})
	}
}

func TestRunToolRetryable(t *testing.T) {
	a := &Activities{Tools: testTools(t), StateDir: t.TempDir()}
	_, err := executeRunTool(t, a, RunToolInput{WorkflowID: "wf", Call: toolCall("flaky", `{}`)})
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) {
		t.Fatalf("RunTool error = %v, want an application error", err)
	}
	if appErr.NonRetryable() || appErr.Type() != ErrTypeToolRetryable {
		t.Errorf("got type %q, non-retryable %v; want retryable %q", appErr.Type(), appErr.NonRetryable(), ErrTypeToolRetryable)
	}
	if !strings.Contains(appErr.Error(), "flaky: connection reset") {
		t.Errorf("message %q does not say what failed", appErr.Error())
	}
}

func TestRunToolDefaultWorkspace(t *testing.T) {
	state := t.TempDir()
	a := &Activities{StateDir: state} // no Tools: the built-ins
	in := RunToolInput{WorkflowID: "session-1/researcher", AgentID: "researcher",
		Call: toolCall("write_file", `{"path": "out.txt", "content": "found it"}`)}
	res, err := executeRunTool(t, a, in)
	if err != nil || res.IsError {
		t.Fatalf("RunTool = %+v, %v", res, err)
	}
	want := filepath.Join(state, SessionsFolder, "session-1%2Fresearcher", "out.txt")
	if got, err := os.ReadFile(want); err != nil || string(got) != "found it" {
		t.Fatalf("%s holds %q, %v", want, got, err)
	}
	// The parent's folder holds nothing of its child's.
	if _, err := os.Stat(filepath.Join(state, SessionsFolder, "session-1")); err == nil {
		t.Error("the subagent's workspace is inside its parent's")
	}
}

func TestRunToolWorkflowIDFromActivityInfo(t *testing.T) {
	state := t.TempDir()
	a := &Activities{StateDir: state}
	res, err := executeRunTool(t, a, RunToolInput{Call: toolCall("list_files", `{}`)})
	if err != nil || res.IsError {
		t.Fatalf("RunTool = %+v, %v", res, err)
	}
	// The test environment's workflow id.
	if _, err := os.Stat(filepath.Join(state, SessionsFolder, "default-test-workflow-id")); err != nil {
		t.Errorf("workspace of the scheduling workflow not created: %v", err)
	}
}

// A relative workspace is inside the worker's first root, whatever the
// worker's current folder.
func TestRunToolRelativeWorkspace(t *testing.T) {
	t.Chdir(t.TempDir())
	first, second := t.TempDir(), t.TempDir()
	a := &Activities{Roots: testRoots(t, first, second)}
	res, err := executeRunTool(t, a, RunToolInput{Workspace: "rel/ws", Call: toolCall("write_file", `{"path": "f", "content": "x"}`)})
	if err != nil || res.IsError {
		t.Fatalf("RunTool = %+v, %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(first, "rel", "ws", "f")); err != nil {
		t.Errorf("file not written inside the first root: %v", err)
	}
	if _, err := os.Stat(filepath.Join("rel", "ws", "f")); err == nil {
		t.Errorf("file written relative to the current folder")
	}
}

func TestRunToolWorkspaceErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	mustWrite(t, file, "not a folder")
	tests := []struct {
		name    string
		a       *Activities
		in      RunToolInput
		wantErr string
	}{
		{"no state folder", &Activities{}, RunToolInput{WorkflowID: "wf", Call: toolCall("list_files", `{}`)},
			"no workspace: the call names none and the worker has no state folder"},
		{"cannot create", &Activities{StateDir: file}, RunToolInput{WorkflowID: "wf", Call: toolCall("list_files", `{}`)},
			"create workspace"},
		{"workspace is a file", &Activities{Roots: testRoots(t, filepath.Dir(file))}, RunToolInput{Workspace: file, Call: toolCall("list_files", `{}`)},
			"create workspace"},
		{"workspace outside the roots", &Activities{Roots: testRoots(t, t.TempDir())}, RunToolInput{Workspace: "/etc", Call: toolCall("list_files", `{}`)},
			"not a folder inside one of the worker's workspace roots"},
		{"no roots", &Activities{}, RunToolInput{Workspace: t.TempDir(), Call: toolCall("list_files", `{}`)},
			"allows no named workspace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := executeRunTool(t, tt.a, tt.in)
			var appErr *temporal.ApplicationError
			if !errors.As(err, &appErr) {
				t.Fatalf("RunTool error = %v, want an application error", err)
			}
			if !appErr.NonRetryable() || appErr.Type() != ErrTypeWorkspace {
				t.Errorf("got type %q, non-retryable %v; want non-retryable %q", appErr.Type(), appErr.NonRetryable(), ErrTypeWorkspace)
			}
			if !strings.Contains(appErr.Error(), tt.wantErr) {
				t.Errorf("message %q does not contain %q", appErr.Error(), tt.wantErr)
			}
		})
	}
}

func TestRunToolUnknownNeedsNoWorkspace(t *testing.T) {
	// An unknown tool is the model's mistake: it is told, even on a worker
	// that could not give it a workspace.
	res, err := executeRunTool(t, &Activities{}, RunToolInput{Call: toolCall("nope", `{}`)})
	if err != nil || !res.IsError || !strings.Contains(res.Content, "list_files, read_file, write_file") {
		t.Fatalf("RunTool = %+v, %v", res, err)
	}
}

// A tool that takes its time heartbeats, naming itself; a quick one costs no
// heartbeat at all. Neither is decided by a clock: the slow tool runs until
// the first heartbeat has come, and the quick one is done long before its
// first interval (an hour), so any heartbeat it cost was sent at once.
func TestRunToolHeartbeats(t *testing.T) {
	defer func(d time.Duration) { heartbeatEvery = d }(heartbeatEvery)
	var beaten chan struct{} // closed at a case's first heartbeat
	reg := tools.DefaultRegistry()
	slow := tools.New(model.ToolSpec{Name: "slow", Parameters: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, tools.Env, json.RawMessage) (string, error) {
			select {
			case <-beaten:
				return "done", nil
			case <-time.After(time.Minute): // a hang, not a slow machine
				return "", errors.New("no heartbeat within a minute")
			}
		})
	if err := reg.Register(slow); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		tool  string
		every time.Duration
		want  bool
	}{{"slow", 20 * time.Millisecond, true}, {"list_files", time.Hour, false}} {
		heartbeatEvery = tt.every
		beaten = make(chan struct{})
		caseBeaten := beaten // the listener's own: a late beat of the case before must not close this one
		var (
			mu    sync.Mutex // the listener runs on the heartbeat's goroutine
			beats []string
			first sync.Once
		)
		var s testsuite.WorkflowTestSuite
		env := s.NewTestActivityEnvironment()
		env.SetOnActivityHeartbeatListener(func(_ *activity.Info, details converter.EncodedValues) {
			var d api.ToolProgress
			if err := details.Get(&d); err != nil {
				t.Error(err)
			}
			mu.Lock()
			beats = append(beats, d.Tool)
			mu.Unlock()
			first.Do(func() { close(caseBeaten) })
		})
		a := &Activities{StateDir: t.TempDir(), Tools: reg}
		env.RegisterActivity(a)
		if _, err := env.ExecuteActivity(a.RunTool, RunToolInput{WorkflowID: "wf", Call: toolCall(tt.tool, `{}`)}); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		got := slices.Clone(beats)
		mu.Unlock()
		if some := len(got) > 0; some != tt.want || (some && got[0] != tt.tool) {
			t.Errorf("%s: heartbeats %q; want some naming the tool: %v", tt.tool, got, tt.want)
		}
	}
}

func TestRunToolCancelled(t *testing.T) {
	reg := tools.NewRegistry(tools.New(model.ToolSpec{Name: "wait"}, func(ctx context.Context, _ tools.Env, _ json.RawMessage) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}))
	a := &Activities{Tools: reg, StateDir: t.TempDir()}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(func(ctx context.Context, in RunToolInput) (RunToolResult, error) {
		ctx, cancel := context.WithCancel(ctx)
		cancel()
		return a.RunTool(ctx, in)
	}, activity.RegisterOptions{Name: api.ToolActivity})
	_, err := env.ExecuteActivity(api.ToolActivity, RunToolInput{WorkflowID: "wf", Call: toolCall("wait", `{}`)})
	if err == nil || !strings.Contains(err.Error(), context.Canceled.Error()) {
		t.Fatalf("RunTool error = %v, want context.Canceled (the attempt failed, not the tool)", err)
	}
}

// floodTools return outputs larger than any limit, as a user tool might.
func floodTools(t *testing.T) *tools.Registry {
	t.Helper()
	reg := tools.DefaultRegistry()
	for _, tool := range []tools.Tool{
		tools.New(model.ToolSpec{Name: "flood"}, func(context.Context, tools.Env, json.RawMessage) (string, error) {
			return "x" + strings.Repeat("€", 100_000), nil // 300,001 bytes; cuts fall inside a character
		}),
		tools.New(model.ToolSpec{Name: "flood_error"}, func(context.Context, tools.Env, json.RawMessage) (string, error) {
			return "", errors.New("flood_error: " + strings.Repeat("stack frame\n", 20_000))
		}),
		tools.New(model.ToolSpec{Name: "exact"}, func(_ context.Context, env tools.Env, _ json.RawMessage) (string, error) {
			return strings.Repeat("y", env.OutputMax), nil
		}),
	} {
		if err := reg.Register(tool); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

func TestRunToolTruncatesOutput(t *testing.T) {
	const marker = `\n\[(\w+): output truncated: the first (\d+) of (\d+) bytes are shown, (\d+) bytes were cut \(the worker keeps at most (\d+)\)\. ` +
		`To see the rest, call (\w+) again asking for less, e\.g\. a narrower path, a smaller range or a filter\.\]$`
	markerRE := regexp.MustCompile(marker)
	tests := []struct {
		name      string
		max       int // Activities.ToolOutputMax
		tool      string
		wantLimit int
		wantTotal int
		wantError bool
	}{
		{"default limit", 0, "flood", DefaultToolOutputMax, 300_001, false},
		{"the worker's limit", 5000, "flood", 5000, 300_001, false},
		{"a limit below the least is raised to it", 10, "flood", MinToolOutputMax, 300_001, false},
		{"an error message", 0, "flood_error", DefaultToolOutputMax, len("flood_error: ") + 12*20_000, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &Activities{Tools: floodTools(t), StateDir: t.TempDir(), ToolOutputMax: tt.max}
			res, err := executeRunTool(t, a, RunToolInput{WorkflowID: "wf", Call: toolCall(tt.tool, `{}`)})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError != tt.wantError {
				t.Errorf("IsError = %v, want %v", res.IsError, tt.wantError)
			}
			m := markerRE.FindStringSubmatch(res.Content)
			if m == nil {
				t.Fatalf("no truncation marker at the end: %q", res.Content[max(0, len(res.Content)-300):])
			}
			kept := strings.TrimSuffix(res.Content, m[0])
			if !utf8.ValidString(kept) || len(kept) > tt.wantLimit || len(kept) < tt.wantLimit-utf8.UTFMax {
				t.Errorf("kept %d bytes (valid UTF-8: %v), want up to %d, cut where a character begins", len(kept), utf8.ValidString(kept), tt.wantLimit)
			}
			want := []string{tt.tool, fmt.Sprint(len(kept)), fmt.Sprint(tt.wantTotal), fmt.Sprint(tt.wantTotal - len(kept)), fmt.Sprint(tt.wantLimit), tt.tool}
			if !slices.Equal(m[1:], want) {
				t.Errorf("marker says %q, want %q", m[1:], want)
			}
		})
	}
}

func TestRunToolKeepsOutputThatFits(t *testing.T) {
	a := &Activities{Tools: floodTools(t), StateDir: t.TempDir(), ToolOutputMax: 3000}
	res, err := executeRunTool(t, a, RunToolInput{WorkflowID: "wf", Call: toolCall("exact", `{}`)})
	if err != nil || res.Content != strings.Repeat("y", 3000) {
		t.Fatalf("RunTool = %d bytes, %v; want the 3000 bytes whole", len(res.Content), err)
	}
}

// The built-ins that can page fit the limit themselves, so RunTool never
// cuts their note on how to go on.
func TestRunToolBuiltinsFitTheLimit(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "ws") // its root beside the state folder
	mustWrite(t, filepath.Join(ws, "big.txt"), strings.Repeat("línea de texto\n", 1000))
	for i := range 200 {
		mustWrite(t, filepath.Join(ws, "many", fmt.Sprintf("file-with-a-rather-long-name-%03d.txt", i)), "")
	}
	a := &Activities{StateDir: t.TempDir(), ToolOutputMax: MinToolOutputMax, Roots: testRoots(t, filepath.Dir(ws))}
	for _, c := range []struct{ tool, args, note string }{
		{"read_file", `{"path": "big.txt"}`, "; call read_file with offset "},
		{"read_file", `{"path": "big.txt", "offset": 3000, "limit": 100000}`, "; call read_file with offset "},
		{"list_files", `{"path": "many"}`, "\n[list_files: stopped after "},
	} {
		res, err := executeRunTool(t, a, RunToolInput{Workspace: ws, Call: toolCall(c.tool, c.args)})
		if err != nil || res.IsError {
			t.Fatalf("%s(%s) = %+v, %v", c.tool, c.args, res, err)
		}
		if len(res.Content) > MinToolOutputMax || strings.Contains(res.Content, "output truncated") || !strings.Contains(res.Content, c.note) {
			t.Errorf("%s(%s): %d bytes ending %q; want its own note within %d bytes", c.tool, c.args, len(res.Content), res.Content[max(0, len(res.Content)-120):], MinToolOutputMax)
		}
	}
}
