package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testEnv returns a tool environment whose workspace does not exist yet (the
// tools create it on first use) and a folder next to it, outside it.
func testEnv(t *testing.T) (env ToolEnv, outside string) {
	t.Helper()
	base := t.TempDir()
	ws, err := NewWorkspace(filepath.Join(base, "ws"))
	if err != nil {
		t.Fatal(err)
	}
	outside = filepath.Join(base, "outside")
	mustWrite(t, filepath.Join(outside, "secret.txt"), "top secret")
	return ToolEnv{WorkflowID: "wf", AgentID: "main", Workspace: ws}, outside
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symbolic links not available: %v", err)
	}
}

// call runs a built-in tool the way RunTool does.
func call(t *testing.T, env ToolEnv, name, args string) (string, error) {
	t.Helper()
	tool, ok := DefaultRegistry().Lookup(name)
	if !ok {
		t.Fatalf("no built-in %q", name)
	}
	return tool.Run(context.Background(), env, json.RawMessage(args))
}

type toolCase struct {
	name    string
	tool    string
	args    string
	want    string // the whole result, when wantErr is empty
	wantErr string // a part of the error
}

func runCases(t *testing.T, env ToolEnv, tests []toolCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := call(t, env, tt.tool, tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("%s(%s) = %q, %v; want error containing %q", tt.tool, tt.args, got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s(%s): %v", tt.tool, tt.args, err)
			}
			if got != tt.want {
				t.Fatalf("%s(%s) = %q, want %q", tt.tool, tt.args, got, tt.want)
			}
		})
	}
}

func TestListFiles(t *testing.T) {
	env, _ := testEnv(t)
	dir := env.Workspace.Dir()
	mustWrite(t, filepath.Join(dir, "b.txt"), "b")
	mustWrite(t, filepath.Join(dir, "a.txt"), "a")
	mustWrite(t, filepath.Join(dir, "src", "main.go"), "package main")
	mustWrite(t, filepath.Join(dir, "src", "util", "util.go"), "package util")
	if err := os.MkdirAll(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, "src", filepath.Join(dir, "srclink"))

	runCases(t, env, []toolCase{
		{name: "default is the workspace", tool: "list_files", args: `{}`,
			want: "a.txt\nb.txt\nempty/\nsrc/\nsrclink/"},
		{name: "no arguments at all", tool: "list_files", args: ``,
			want: "a.txt\nb.txt\nempty/\nsrc/\nsrclink/"},
		{name: "dot", tool: "list_files", args: `{"path": "."}`,
			want: "a.txt\nb.txt\nempty/\nsrc/\nsrclink/"},
		{name: "subfolder, paths relative to the workspace", tool: "list_files", args: `{"path": "src"}`,
			want: "src/main.go\nsrc/util/"},
		{name: "subfolder with trailing slash", tool: "list_files", args: `{"path": "src/"}`,
			want: "src/main.go\nsrc/util/"},
		{name: "recursive", tool: "list_files", args: `{"recursive": true}`,
			want: "a.txt\nb.txt\nempty/\nsrc/\nsrc/main.go\nsrc/util/\nsrc/util/util.go\nsrclink/"},
		{name: "recursive subfolder", tool: "list_files", args: `{"path": "src", "recursive": true}`,
			want: "src/main.go\nsrc/util/\nsrc/util/util.go"},
		{name: "through a link inside the workspace", tool: "list_files", args: `{"path": "srclink"}`,
			want: "srclink/main.go\nsrclink/util/"},
		{name: "empty folder", tool: "list_files", args: `{"path": "empty"}`,
			want: `folder "empty" is empty`},
		{name: "a file", tool: "list_files", args: `{"path": "a.txt"}`,
			wantErr: `list_files: "a.txt" is a file, not a folder`},
		{name: "missing", tool: "list_files", args: `{"path": "nope"}`,
			wantErr: `list_files: "nope" does not exist`},
	})
}

func TestListFilesCreatesWorkspace(t *testing.T) {
	env, _ := testEnv(t)
	got, err := call(t, env, "list_files", `{}`)
	if err != nil || got != "the workspace is empty" {
		t.Fatalf("list_files = %q, %v", got, err)
	}
	if fi, err := os.Stat(env.Workspace.Dir()); err != nil || !fi.IsDir() {
		t.Fatalf("workspace not created: %v", err)
	}
}

func TestListFilesCap(t *testing.T) {
	env, _ := testEnv(t)
	for i := range MaxListEntries + 5 {
		mustWrite(t, filepath.Join(env.Workspace.Dir(), "many", fmt.Sprintf("f%04d", i)), "")
	}
	for _, args := range []string{`{"path": "many"}`, `{"recursive": true}`} {
		got, err := call(t, env, "list_files", args)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(got, "\n")
		if len(lines) != MaxListEntries+1 || !strings.Contains(lines[len(lines)-1], "stopped after 1000 entries") {
			t.Errorf("list_files(%s): %d lines, last %q; want %d entries and a note", args, len(lines), lines[len(lines)-1], MaxListEntries)
		}
	}
}

func TestReadFile(t *testing.T) {
	env, _ := testEnv(t)
	dir := env.Workspace.Dir()
	mustWrite(t, filepath.Join(dir, "notes.md"), "# Notes\nhello\n")
	mustWrite(t, filepath.Join(dir, "empty.txt"), "")
	mustWrite(t, filepath.Join(dir, "docs", "a.txt"), "in docs")
	mustWrite(t, filepath.Join(dir, "image.png"), "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	mustWrite(t, filepath.Join(dir, "latin1.txt"), "caf\xe9")
	mustSymlink(t, "docs/a.txt", filepath.Join(dir, "alias.txt"))

	runCases(t, env, []toolCase{
		{name: "text", tool: "read_file", args: `{"path": "notes.md"}`, want: "# Notes\nhello\n"},
		{name: "empty", tool: "read_file", args: `{"path": "empty.txt"}`, want: ""},
		{name: "nested", tool: "read_file", args: `{"path": "docs/a.txt"}`, want: "in docs"},
		{name: "dot dot inside", tool: "read_file", args: `{"path": "docs/../notes.md"}`, want: "# Notes\nhello\n"},
		{name: "link inside the workspace", tool: "read_file", args: `{"path": "alias.txt"}`, want: "in docs"},
		{name: "missing", tool: "read_file", args: `{"path": "nope.txt"}`, wantErr: `read_file: "nope.txt" does not exist`},
		{name: "folder", tool: "read_file", args: `{"path": "docs"}`, wantErr: `read_file: "docs" is a folder; use list_files`},
		{name: "workspace itself", tool: "read_file", args: `{"path": "."}`, wantErr: `is a folder`},
		{name: "binary", tool: "read_file", args: `{"path": "image.png"}`, wantErr: `read_file: "image.png" is not UTF-8 text`},
		{name: "not UTF-8", tool: "read_file", args: `{"path": "latin1.txt"}`, wantErr: `is not UTF-8 text`},
		{name: "empty path", tool: "read_file", args: `{"path": ""}`, wantErr: `read_file: path is empty`},
	})
}

func TestReadFileTruncates(t *testing.T) {
	env, _ := testEnv(t)
	// A three-byte character straddles the limit: it must be dropped whole,
	// not make the file look binary.
	content := strings.Repeat("a", MaxReadBytes-1) + "€" + strings.Repeat("b", 100)
	mustWrite(t, filepath.Join(env.Workspace.Dir(), "big.txt"), content)
	got, err := call(t, env, "read_file", `{"path": "big.txt"}`)
	if err != nil {
		t.Fatal(err)
	}
	body, note, ok := strings.Cut(got, "\n[read_file: truncated;")
	if !ok {
		t.Fatalf("no truncation note in the last 100 bytes: %q", got[len(got)-100:])
	}
	if body != content[:MaxReadBytes-1] {
		t.Errorf("body has %d bytes, want the %d before the cut character", len(body), MaxReadBytes-1)
	}
	if want := fmt.Sprintf("first %d bytes of the file's %d or more]", MaxReadBytes-1, len(content)); !strings.HasSuffix(note, want) {
		t.Errorf("note = %q, want it to end with %q", note, want)
	}

	exact := strings.Repeat("x", MaxReadBytes)
	mustWrite(t, filepath.Join(env.Workspace.Dir(), "exact.txt"), exact)
	if got, err := call(t, env, "read_file", `{"path": "exact.txt"}`); err != nil || got != exact {
		t.Errorf("a file of exactly MaxReadBytes: %d bytes, %v; want it whole", len(got), err)
	}
}

func TestWriteFile(t *testing.T) {
	env, _ := testEnv(t)
	dir := env.Workspace.Dir()
	mustWrite(t, filepath.Join(dir, "old.txt"), "old content that is long")
	if err := os.MkdirAll(filepath.Join(dir, "folder"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, "old.txt", filepath.Join(dir, "alias.txt"))

	tests := []struct {
		toolCase
		file, content string // expected on disk
	}{
		{toolCase{name: "new file", tool: "write_file", args: `{"path": "hello.txt", "content": "hi there"}`,
			want: "wrote 8 bytes to hello.txt"}, "hello.txt", "hi there"},
		{toolCase{name: "creates parents", tool: "write_file", args: `{"path": "a/b/c.txt", "content": "deep"}`,
			want: "wrote 4 bytes to a/b/c.txt"}, "a/b/c.txt", "deep"},
		{toolCase{name: "replaces", tool: "write_file", args: `{"path": "old.txt", "content": "new"}`,
			want: "wrote 3 bytes to old.txt"}, "old.txt", "new"},
		{toolCase{name: "empty content", tool: "write_file", args: `{"path": "empty.txt", "content": ""}`,
			want: "wrote 0 bytes to empty.txt"}, "empty.txt", ""},
		{toolCase{name: "counts bytes", tool: "write_file", args: `{"path": "euro.txt", "content": "€"}`,
			want: "wrote 3 bytes to euro.txt"}, "euro.txt", "€"},
		{toolCase{name: "cleaned path", tool: "write_file", args: `{"path": "./x/../y.txt", "content": "y"}`,
			want: "wrote 1 bytes to y.txt"}, "y.txt", "y"},
		{toolCase{name: "through a link inside", tool: "write_file", args: `{"path": "alias.txt", "content": "via link"}`,
			want: "wrote 8 bytes to alias.txt"}, "old.txt", "via link"},
		{toolCase{name: "folder", tool: "write_file", args: `{"path": "folder", "content": "x"}`,
			wantErr: `write_file: "folder" is a folder, not a file`}, "", ""},
		{toolCase{name: "workspace itself", tool: "write_file", args: `{"path": ".", "content": "x"}`,
			wantErr: `write_file: path "." is the workspace itself`}, "", ""},
		{toolCase{name: "parent is a file", tool: "write_file", args: `{"path": "hello.txt/x", "content": "x"}`,
			wantErr: `write_file: "hello.txt/x"`}, "", ""},
	}
	for _, tt := range tests {
		runCases(t, env, []toolCase{tt.toolCase})
		if tt.file == "" {
			continue
		}
		got, err := os.ReadFile(filepath.Join(dir, tt.file))
		if err != nil || string(got) != tt.content {
			t.Errorf("%s: %s holds %q, %v; want %q", tt.name, tt.file, got, err, tt.content)
		}
	}
}

func TestConfinement(t *testing.T) {
	env, outside := testEnv(t)
	dir := env.Workspace.Dir()
	mustWrite(t, filepath.Join(dir, "inside.txt"), "inside")
	mustSymlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(dir, "secret-link"))
	mustSymlink(t, "../outside/secret.txt", filepath.Join(dir, "relative-link"))
	mustSymlink(t, outside, filepath.Join(dir, "outdir"))
	mustSymlink(t, filepath.Join(outside, "new.txt"), filepath.Join(dir, "dangling"))
	mustSymlink(t, "outdir", filepath.Join(dir, "chain")) // a link to a link that leads out

	const leaves = "leads outside the workspace"
	const absolute = "is absolute; paths are relative to the workspace"
	runCases(t, env, []toolCase{
		{name: "read ../", tool: "read_file", args: `{"path": "../outside/secret.txt"}`, wantErr: leaves},
		{name: "read .. after a folder", tool: "read_file", args: `{"path": "a/../../outside/secret.txt"}`, wantErr: leaves},
		{name: "read absolute", tool: "read_file", args: `{"path": "/etc/passwd"}`, wantErr: absolute},
		{name: "read absolute inside", tool: "read_file", args: fmt.Sprintf(`{"path": %q}`, filepath.Join(dir, "inside.txt")), wantErr: absolute},
		{name: "read link to a file outside", tool: "read_file", args: `{"path": "secret-link"}`, wantErr: leaves},
		{name: "read relative link outside", tool: "read_file", args: `{"path": "relative-link"}`, wantErr: leaves},
		{name: "read in a linked folder", tool: "read_file", args: `{"path": "outdir/secret.txt"}`, wantErr: leaves},
		{name: "read through a chain of links", tool: "read_file", args: `{"path": "chain/secret.txt"}`, wantErr: leaves},
		{name: "list ..", tool: "list_files", args: `{"path": ".."}`, wantErr: leaves},
		{name: "list /", tool: "list_files", args: `{"path": "/"}`, wantErr: absolute},
		{name: "list a linked folder", tool: "list_files", args: `{"path": "outdir"}`, wantErr: leaves},
		{name: "write ../", tool: "write_file", args: `{"path": "../outside/new.txt", "content": "x"}`, wantErr: leaves},
		{name: "write absolute", tool: "write_file", args: `{"path": "/tmp/new.txt", "content": "x"}`, wantErr: absolute},
		{name: "write in a linked folder", tool: "write_file", args: `{"path": "outdir/new.txt", "content": "x"}`, wantErr: leaves},
		{name: "write below a linked folder", tool: "write_file", args: `{"path": "outdir/sub/new.txt", "content": "x"}`, wantErr: leaves},
		{name: "write through a link to a file", tool: "write_file", args: `{"path": "secret-link", "content": "x"}`, wantErr: leaves},
		{name: "write through a dangling link", tool: "write_file", args: `{"path": "dangling", "content": "x"}`, wantErr: leaves},
	})

	if got, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(got) != "top secret" {
		t.Errorf("the file outside was changed to %q", got)
	}
	for _, name := range []string{"new.txt", "sub"} {
		if _, err := os.Lstat(filepath.Join(outside, name)); err == nil {
			t.Errorf("%s was created outside the workspace", name)
		}
	}

	// A link listed in the workspace is shown, but not followed out.
	got, err := call(t, env, "list_files", `{"recursive": true}`)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, "secret.txt") {
		t.Errorf("recursive listing shows files outside the workspace:\n%s", got)
	}
}

// The os.Root is what keeps the tools inside even when Clean is not asked
// first, or a link changes after it was checked.
func TestRootRefusesWhatCleanMissed(t *testing.T) {
	env, outside := testEnv(t)
	mustSymlink(t, outside, filepath.Join(env.Workspace.Dir(), "outdir"))
	root, err := env.Workspace.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	_, err = root.Open("outdir/secret.txt")
	if !isEscape(err) {
		t.Fatalf("Open through a link that leads out: %v, want the os.Root escape error", err)
	}
	if got := pathError("read_file", "outdir/secret.txt", err).Error(); !strings.Contains(got, "leads outside the workspace") {
		t.Errorf("pathError = %q", got)
	}
}

func TestMalformedArguments(t *testing.T) {
	env, _ := testEnv(t)
	runCases(t, env, []toolCase{
		{name: "list: array", tool: "list_files", args: `["."]`, wantErr: "list_files: arguments must be a JSON object, got an array"},
		{name: "list: string", tool: "list_files", args: `"."`, wantErr: `list_files: arguments must be a JSON object, got the string "."`},
		{name: "list: path number", tool: "list_files", args: `{"path": 3}`, wantErr: `list_files: argument "path" must be of type string, got number`},
		{name: "list: recursive string", tool: "list_files", args: `{"recursive": "yes"}`, wantErr: `list_files: argument "recursive" must be of type boolean, got string`},
		{name: "list: unknown", tool: "list_files", args: `{"dir": "src"}`, wantErr: `list_files: unknown argument "dir" (accepted: path, recursive)`},
		{name: "read: not JSON", tool: "read_file", args: `path=a.txt`, wantErr: "read_file: arguments must be a JSON object, got text that is not valid JSON"},
		{name: "read: missing path", tool: "read_file", args: `{}`, wantErr: `read_file: missing required argument "path"`},
		{name: "read: null", tool: "read_file", args: `null`, wantErr: `read_file: missing required argument "path"`},
		{name: "read: path null", tool: "read_file", args: `{"path": null}`, wantErr: `read_file: argument "path" must be of type string, got null`},
		{name: "read: path array", tool: "read_file", args: `{"path": ["a"]}`, wantErr: `read_file: argument "path" must be of type string, got array`},
		{name: "write: missing content", tool: "write_file", args: `{"path": "a.txt"}`, wantErr: `write_file: missing required argument "content"`},
		{name: "write: missing path", tool: "write_file", args: `{"content": "x"}`, wantErr: `write_file: missing required argument "path"`},
		{name: "write: content object", tool: "write_file", args: `{"path": "a.txt", "content": {"x": 1}}`, wantErr: `write_file: argument "content" must be of type string, got object`},
		{name: "write: unknown", tool: "write_file", args: `{"path": "a.txt", "content": "x", "mode": "append"}`, wantErr: `write_file: unknown argument "mode" (accepted: content, path)`},
	})
}

func TestClean(t *testing.T) {
	env, _ := testEnv(t)
	tests := []struct {
		in, want, wantErr string
	}{
		{in: "a.txt", want: "a.txt"},
		{in: "./a/b/../c", want: filepath.FromSlash("a/c")},
		{in: ".", want: "."},
		{in: "a/..", want: "."},
		{in: "", wantErr: "path is empty"},
		{in: "..", wantErr: `path ".." leads outside the workspace`},
		{in: "../ws/a.txt", wantErr: "leads outside the workspace"}, // even back into it
		{in: "/etc/passwd", wantErr: `path "/etc/passwd" is absolute`},
	}
	for _, tt := range tests {
		got, err := env.Workspace.Clean(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Clean(%q) = %q, %v; want error containing %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Clean(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestRealPathLinkLoop(t *testing.T) {
	dir := t.TempDir()
	mustSymlink(t, "b", filepath.Join(dir, "a"))
	mustSymlink(t, "a", filepath.Join(dir, "b"))
	env := ToolEnv{Workspace: Workspace{dir: dir}}
	// Not a panic or a hang: the os.Root reports the loop when the file is used.
	if _, err := call(t, env, "write_file", `{"path": "a", "content": "x"}`); err == nil {
		t.Fatal("write through a link loop succeeded")
	}
}
