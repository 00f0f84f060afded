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
)

// write_file's result shows the user a diff of the file before and after
// the call, beside the content the model reads, which stays as it was.
func TestRunToolWriteFileDiff(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "ws") // its root beside the state folder
	a := &Activities{StateDir: t.TempDir(), Roots: testRoots(t, filepath.Dir(ws))}
	mustWrite(t, filepath.Join(ws, "old.txt"), "one\ntwo\nthree\n")
	mustWrite(t, filepath.Join(ws, "same.txt"), "same\n")
	mustWrite(t, filepath.Join(ws, "huge.txt"), strings.Repeat("x\n", tools.MaxWriteBytes/2+1))
	mustWrite(t, filepath.Join(ws, "blob.bin"), "PK\x03\x04\x00\x00")
	mustWrite(t, filepath.Join(ws, "adir", "inside"), "")
	write := func(path, content string) string {
		args, _ := json.Marshal(map[string]string{"path": path, "content": content})
		return string(args)
	}
	tests := []struct {
		name string
		args string
		want RunToolResult
	}{
		{"a new file: every line added", write("new.txt", "a\nb\n"),
			RunToolResult{Content: "wrote 4 bytes to new.txt", Diff: "@@ -0,0 +1,2 @@\n+a\n+b"}},
		{"a changed file", write("old.txt", "one\n2\nthree\n"),
			RunToolResult{Content: "wrote 12 bytes to old.txt", Diff: "@@ -1,3 +1,3 @@\n one\n-two\n+2\n three"}},
		{"unchanged", write("same.txt", "same\n"),
			RunToolResult{Content: "wrote 5 bytes to same.txt", Diff: `\ no change: the file already had this content`}},
		{"a huge previous file is not compared", write("huge.txt", "small\n"),
			RunToolResult{Content: "wrote 6 bytes to huge.txt", Diff: fmt.Sprintf(`\ the previous content is over %d bytes, too large to compare`, tools.MaxWriteBytes)}},
		{"a binary previous file is not compared", write("blob.bin", "text\n"),
			RunToolResult{Content: "wrote 5 bytes to blob.bin", Diff: `\ the previous content (6 bytes) is not text, so it is not compared: it looks like a binary file: byte 4 is NUL`}},
		{"binary new content is not compared", write("nul.txt", "a\x00b"),
			RunToolResult{Content: "wrote 3 bytes to nul.txt", Diff: `\ the new content (3 bytes) is not text, so it is not compared: it looks like a binary file: byte 1 is NUL`}},
		{"a refused write shows none", write("adir", "y"),
			RunToolResult{Content: `write_file: "adir" is a folder, not a file`, IsError: true}},
		{"other tools show none", `{"path": "new.txt"}`,
			RunToolResult{Content: "a\nb\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "write_file"
			if !strings.Contains(tt.args, "content") {
				name = "read_file"
			}
			got, err := executeRunTool(t, a, RunToolInput{WorkflowID: "wf-1", Workspace: ws, Call: toolCall(name, tt.args)})
			if err != nil {
				t.Fatalf("RunTool failed: %v", err)
			}
			if got != tt.want {
				t.Fatalf("RunTool = %+v\nwant      %+v", got, tt.want)
			}
		})
	}
}

// A large change is cut to its bounds, and says how much was left out.
func TestRunToolWriteFileDiffBounded(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "ws") // its root beside the state folder
	a := &Activities{StateDir: t.TempDir(), Roots: testRoots(t, filepath.Dir(ws))}
	var b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&b, "line %d of many, long enough to fill the budget before the line cap\n", i)
	}
	args, _ := json.Marshal(map[string]string{"path": "big.txt", "content": b.String()})
	got, err := executeRunTool(t, a, RunToolInput{WorkflowID: "wf-1", Workspace: ws, Call: toolCall("write_file", string(args))})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Diff) > tools.MaxDiffBytes || strings.Count(got.Diff, "\n")+1 > 200 {
		t.Errorf("the diff has %d bytes and %d lines, over %d or %d", len(got.Diff), strings.Count(got.Diff, "\n")+1, tools.MaxDiffBytes, 200)
	}
	if last := got.Diff[strings.LastIndexByte(got.Diff, '\n')+1:]; !strings.HasPrefix(last, `\ `) || !strings.Contains(last, "not shown") {
		t.Errorf("the diff's last line does not say what was left out: %q", last)
	}
}

// A tool of the worker's own may show a diff too; one too long is cut, on a
// line's end, with a note, and made valid UTF-8.
func TestRunToolShowDiffBounded(t *testing.T) {
	long := "@@ -1 +1 @@\n" + strings.Repeat("+added line\n", tools.MaxDiffBytes/6) + "\xff"
	reg := tools.NewRegistry(tools.New(model.ToolSpec{Name: "patch"}, func(_ context.Context, env tools.Env, _ json.RawMessage) (string, error) {
		env.ShowDiff("an earlier diff")
		env.ShowDiff(long)
		return "patched", nil
	}))
	ws := filepath.Join(t.TempDir(), "ws") // its root beside the state folder
	a := &Activities{Tools: reg, StateDir: t.TempDir(), Roots: testRoots(t, filepath.Dir(ws))}
	got, err := executeRunTool(t, a, RunToolInput{WorkflowID: "wf-1", Workspace: ws, Call: toolCall("patch", `{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got.Content != "patched" {
		t.Errorf("content %q", got.Content)
	}
	if len(got.Diff) > tools.MaxDiffBytes {
		t.Errorf("the diff has %d bytes, over %d", len(got.Diff), tools.MaxDiffBytes)
	}
	lines := strings.Split(got.Diff, "\n")
	if lines[len(lines)-2] != "+added line" || !strings.HasSuffix(lines[len(lines)-1], "more bytes of the diff not shown") {
		t.Errorf("the diff ends %q", lines[len(lines)-2:])
	}
}
