package activities

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/todoflow/todoflow/activities/tools"
	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/model"
)

func executePreview(t *testing.T, a *Activities, in RunToolInput) api.CallDiff {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	val, err := env.ExecuteActivity(a.PreviewTool, in)
	if err != nil {
		t.Fatalf("PreviewTool failed: %v", err)
	}
	var res api.CallDiff
	if err := val.Get(&res); err != nil {
		t.Fatalf("decode result: %v", err)
	}
	return res
}

// PreviewTool finds the call's tool as RunTool does, in the run's
// workspace, and answers with its diff (write_file's, whose own cases are
// in package tools), or why there is none: a write the tool would refuse,
// a tool that shows none, one the worker does not have.
func TestPreviewTool(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "ws") // its root beside the state folder
	a := &Activities{StateDir: t.TempDir(), Roots: testRoots(t, filepath.Dir(ws))}
	mustWrite(t, filepath.Join(ws, "old.txt"), "one\ntwo\nthree\n")
	for _, tt := range []struct {
		name, tool, args string
		want             api.CallDiff
	}{
		{"a changed file", "write_file", `{"path": "old.txt", "content": "one\n2\nthree\n"}`,
			api.CallDiff{Hunks: "@@ -1,3 +1,3 @@\n one\n-two\n+2\n three", Added: 1, Removed: 1}},
		{"outside the workspace", "write_file", `{"path": "../x.txt", "content": "x"}`,
			api.CallDiff{Unavailable: `the call would fail: write_file: path "../x.txt" leads outside the workspace`}},
		{"a tool that shows no diff", "read_file", `{"path": "old.txt"}`,
			api.CallDiff{Unavailable: "tool read_file of this worker shows no diff before it runs"}},
		{"a tool the worker does not have", "nope", `{}`, api.CallDiff{Unavailable: "this worker has no tool nope"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := executePreview(t, a, RunToolInput{WorkflowID: "wf-1", Workspace: ws, Call: toolCall(tt.tool, tt.args)}); got != tt.want {
				t.Fatalf("PreviewTool = %+v\nwant          %+v", got, tt.want)
			}
		})
	}
}

// A run that does not allow the tool gets no preview of it; a preview
// that panics says so; a long diff is cut to tools.MaxDiffBytes, as after
// a write.
func TestPreviewToolRefusalsAndBounds(t *testing.T) {
	long := "@@ -1 +1 @@\n" + strings.Repeat("+added line\n", tools.MaxDiffBytes/6)
	run := func(context.Context, tools.Env, json.RawMessage) (string, error) { return "", nil }
	reg := tools.NewRegistry(
		tools.WithPreview(tools.WithHints(tools.New(model.ToolSpec{Name: "long"}, run), tools.Hints{}), func(context.Context, tools.Env, json.RawMessage) (api.CallDiff, error) {
			return api.CallDiff{Hunks: long, Added: tools.MaxDiffBytes / 6}, nil
		}),
		tools.WithPreview(tools.WithHints(tools.New(model.ToolSpec{Name: "crash"}, run), tools.Hints{}), func(context.Context, tools.Env, json.RawMessage) (api.CallDiff, error) {
			panic("a bug in the preview")
		}),
	)
	ws := filepath.Join(t.TempDir(), "ws")
	a := &Activities{Tools: reg, StateDir: t.TempDir(), Roots: testRoots(t, filepath.Dir(ws))}

	got := executePreview(t, a, RunToolInput{WorkflowID: "wf-1", Workspace: ws, Call: toolCall("long", `{}`)})
	if len(got.Hunks) > tools.MaxDiffBytes || !strings.Contains(got.Hunks, "more bytes of the diff not shown") || got.Added != tools.MaxDiffBytes/6 {
		t.Errorf("a long diff: %d bytes, added %d, ends %q", len(got.Hunks), got.Added, got.Hunks[max(len(got.Hunks)-60, 0):])
	}
	got = executePreview(t, a, RunToolInput{WorkflowID: "wf-1", Workspace: ws, Call: toolCall("crash", `{}`)})
	if !strings.HasPrefix(got.Unavailable, "the call would fail: crash: the preview failed unexpectedly (panic: ") {
		t.Errorf("a panicking preview: %+v", got)
	}
	got = executePreview(t, a, RunToolInput{WorkflowID: "wf-1", Workspace: ws, Call: toolCall("long", `{}`), WorkerTools: []string{"read_*"}})
	if got != (api.CallDiff{Unavailable: "tool long is not allowed in this run"}) {
		t.Errorf("a tool the run does not allow: %+v", got)
	}
}

// Every built-in that writes a file shows its diff before it runs, and
// the workflow asks for it (Previews) of those and no other.
func TestPreviewsTheBuiltinsThatWrite(t *testing.T) {
	reg := tools.DefaultRegistry()
	for _, name := range reg.Names() {
		tool, _ := reg.Lookup(name)
		_, previews := tool.(tools.Previewer)
		if previews != Previews(name) {
			t.Errorf("tool %s: a Previewer %v, asked for a preview %v", name, previews, Previews(name))
		}
		if h, _ := tools.HintsOf(tool); previews && h.ReadOnly {
			t.Errorf("tool %s previews, yet it is read-only", name)
		}
	}
}
