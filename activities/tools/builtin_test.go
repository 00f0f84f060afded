package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// minOutputMax is the least output limit a worker may set
// (activities.MinToolOutputMax): the built-in tools fit their answers to it.
const minOutputMax = 1 << 10

// testEnv returns a tool environment whose workspace is open and empty,
// as RunTool hands it, and a folder next to it, outside it.
func testEnv(t *testing.T) (env Env, outside string) {
	t.Helper()
	base := t.TempDir()
	ws := openWorkspace(t, filepath.Join(base, "ws"))
	outside = filepath.Join(base, "outside")
	mustWrite(t, filepath.Join(outside, "secret.txt"), "top secret")
	return Env{WorkflowID: "wf", AgentID: "main", Workspace: ws}, outside
}

// openWorkspace opens the workspace dir until the test ends.
func openWorkspace(t testing.TB, dir string) Workspace {
	t.Helper()
	ws, err := OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
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
func call(t *testing.T, env Env, name, args string) (string, error) {
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

func runCases(t *testing.T, env Env, tests []toolCase) {
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

// Long paths stop a listing before MaxListEntries: the listing and its note
// fit the output the model reads.
func TestListFilesFitsTheOutputLimit(t *testing.T) {
	env, _ := testEnv(t)
	env.OutputMax = minOutputMax
	long := strings.Repeat("n", 100)
	for i := range 30 {
		mustWrite(t, filepath.Join(env.Workspace.Dir(), "deep", fmt.Sprintf("%s-%02d.txt", long, i)), "")
	}
	for _, args := range []string{`{"path": "deep"}`, `{"recursive": true}`} {
		got, err := call(t, env, "list_files", args)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(got, "\n")
		note := lines[len(lines)-1]
		if len(got) > env.OutputMax || note != fmt.Sprintf("[list_files: stopped after %d entries; list a subfolder to see more]", len(lines)-1) {
			t.Errorf("list_files(%s): %d bytes, %d lines, last %q; want at most %d bytes and a note", args, len(got), len(lines), note, env.OutputMax)
		}
	}
	// Entries that fit exactly are not "stopped".
	env.OutputMax = 0
	if got, err := call(t, env, "list_files", `{"path": "deep"}`); err != nil || strings.Contains(got, "stopped") || strings.Count(got, "\n") != 29 {
		t.Errorf("list_files without a limit: %d lines, %v", strings.Count(got, "\n")+1, err)
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
		{name: "binary", tool: "read_file", args: `{"path": "image.png"}`, wantErr: `read_file: "image.png" is not UTF-8 text: byte 0 is not part of a UTF-8 character (the file has 16 bytes)`},
		{name: "not UTF-8", tool: "read_file", args: `{"path": "latin1.txt"}`, wantErr: `read_file: "latin1.txt" is not UTF-8 text: byte 3`},
		{name: "empty path", tool: "read_file", args: `{"path": ""}`, wantErr: `read_file: path is empty`},
	})
}

func TestReadFileTruncates(t *testing.T) {
	env, _ := testEnv(t)
	// A three-byte character straddles the limit: it must be left for the
	// next piece whole, not make the file look binary.
	content := strings.Repeat("a", MaxReadBytes-1) + "€" + strings.Repeat("b", 100)
	mustWrite(t, filepath.Join(env.Workspace.Dir(), "big.txt"), content)
	got, err := call(t, env, "read_file", `{"path": "big.txt"}`)
	if err != nil {
		t.Fatal(err)
	}
	body, note, ok := strings.Cut(got, "\n[read_file: ")
	if !ok {
		t.Fatalf("no note in the last 100 bytes: %q", got[len(got)-100:])
	}
	if body != content[:MaxReadBytes-1] {
		t.Errorf("body has %d bytes, want the %d before the cut character", len(body), MaxReadBytes-1)
	}
	want := fmt.Sprintf("%d bytes from offset 0 of the file's %d; call read_file with offset %d to read on]", MaxReadBytes-1, len(content), MaxReadBytes-1)
	if note != want {
		t.Errorf("note = %q, want %q", note, want)
	}

	exact := strings.Repeat("x", MaxReadBytes)
	mustWrite(t, filepath.Join(env.Workspace.Dir(), "exact.txt"), exact)
	if got, err := call(t, env, "read_file", `{"path": "exact.txt"}`); err != nil || got != exact {
		t.Errorf("a file of exactly MaxReadBytes: %d bytes, %v; want it whole", len(got), err)
	}
}

// readNote matches read_file's note of a piece that is not the last.
var readNote = regexp.MustCompile(`\n\[read_file: (\d+) bytes from offset (\d+) of the file's (\d+); call read_file with offset (\d+) to read on\]$`)

// A file read in pieces, as a model does from the notes, comes back whole:
// every piece fits the output limit, note included, and none cuts a
// character.
func TestReadFileInPieces(t *testing.T) {
	env, _ := testEnv(t)
	env.OutputMax = minOutputMax
	var b strings.Builder
	for i := 0; b.Len() < 5000; i++ {
		fmt.Fprintf(&b, "line %d: héllo wörld € 😀\n", i)
	}
	content := b.String()
	mustWrite(t, filepath.Join(env.Workspace.Dir(), "doc.txt"), content)

	var got strings.Builder
	for offset, calls := 0, 0; ; calls++ {
		if calls > 20 {
			t.Fatalf("still reading after %d calls", calls)
		}
		out, err := call(t, env, "read_file", fmt.Sprintf(`{"path": "doc.txt", "offset": %d}`, offset))
		if err != nil {
			t.Fatal(err)
		}
		if len(out) > env.OutputMax {
			t.Fatalf("piece of %d bytes, over the output limit of %d", len(out), env.OutputMax)
		}
		m := readNote.FindStringSubmatch(out)
		if m == nil {
			// The last piece: from offset to the end.
			body, ok := strings.CutSuffix(out, fmt.Sprintf("\n[read_file: %d bytes from offset %d, up to the end of the file]", len(content)-offset, offset))
			if !ok {
				t.Fatalf("last piece has no end note: %q", out[max(0, len(out)-120):])
			}
			got.WriteString(body)
			break
		}
		body := strings.TrimSuffix(out, m[0])
		if !utf8.ValidString(body) || m[1] != fmt.Sprint(len(body)) || m[2] != fmt.Sprint(offset) || m[3] != fmt.Sprint(len(content)) {
			t.Fatalf("piece at %d: %d bytes, note %q", offset, len(body), m[0])
		}
		got.WriteString(body)
		offset, _ = strconv.Atoi(m[4])
	}
	if got.String() != content {
		t.Errorf("the pieces make %d bytes, not the file's %d", got.Len(), len(content))
	}
}

func TestReadFileOffsetAndLimit(t *testing.T) {
	env, _ := testEnv(t)
	mustWrite(t, filepath.Join(env.Workspace.Dir(), "euro.txt"), "a€b€c") // € is 3 bytes: a=0, €=1..3, b=4
	runCases(t, env, []toolCase{
		{name: "offset", tool: "read_file", args: `{"path": "euro.txt", "offset": 4}`,
			want: "b€c\n[read_file: 5 bytes from offset 4, up to the end of the file]"},
		{name: "offset inside a character starts at the next", tool: "read_file", args: `{"path": "euro.txt", "offset": 2}`,
			want: "b€c\n[read_file: 5 bytes from offset 4, up to the end of the file]"},
		{name: "limit", tool: "read_file", args: `{"path": "euro.txt", "limit": 4}`,
			want: "a€\n[read_file: 4 bytes from offset 0 of the file's 9; call read_file with offset 4 to read on]"},
		{name: "limit inside a character stops before it", tool: "read_file", args: `{"path": "euro.txt", "limit": 3}`,
			want: "a\n[read_file: 1 bytes from offset 0 of the file's 9; call read_file with offset 1 to read on]"},
		{name: "limit smaller than a character still moves on", tool: "read_file", args: `{"path": "euro.txt", "offset": 1, "limit": 1}`,
			want: "€\n[read_file: 3 bytes from offset 1 of the file's 9; call read_file with offset 4 to read on]"},
		{name: "offset at the end", tool: "read_file", args: `{"path": "euro.txt", "offset": 9}`,
			want: "\n[read_file: 0 bytes from offset 9, up to the end of the file]"},
		{name: "offset past the end", tool: "read_file", args: `{"path": "euro.txt", "offset": 10}`,
			wantErr: `read_file: offset 10 is past the end of "euro.txt", which has 9 bytes`},
		{name: "negative offset", tool: "read_file", args: `{"path": "euro.txt", "offset": -1}`,
			wantErr: `read_file: invalid argument "offset": minimum: -1 is less than 0`},
		{name: "zero limit", tool: "read_file", args: `{"path": "euro.txt", "limit": 0}`,
			wantErr: `read_file: invalid argument "limit": minimum: 0 is less than 1`},
		{name: "offset not a number", tool: "read_file", args: `{"path": "euro.txt", "offset": "4"}`,
			wantErr: `read_file: invalid argument "offset": has type "string", want "integer"`},
		{name: "fractional limit", tool: "read_file", args: `{"path": "euro.txt", "limit": 2.5}`,
			wantErr: `read_file: invalid argument "limit": has type "number", want "integer"`},
	})
}

func TestReadFileRefusesBinary(t *testing.T) {
	env, _ := testEnv(t)
	dir := env.Workspace.Dir()
	text := strings.Repeat("plain text\n", 1000) // 11000 bytes, past the first block
	mustWrite(t, filepath.Join(dir, "nul.txt"), "abc\x00def")
	mustWrite(t, filepath.Join(dir, "late-nul.log"), text+"\x00tail")
	mustWrite(t, filepath.Join(dir, "late-latin1.log"), text+"caf\xe9")
	// A character cut by the end of the first block is text, not binary.
	mustWrite(t, filepath.Join(dir, "straddle.txt"), strings.Repeat("a", sniffBytes-1)+"€ and more")
	mustWrite(t, filepath.Join(dir, "cut-at-eof.txt"), "ends in half a character \xe2\x82")

	runCases(t, env, []toolCase{
		{name: "NUL in the first block", tool: "read_file", args: `{"path": "nul.txt"}`,
			wantErr: `read_file: "nul.txt" looks like a binary file: byte 3 is NUL (the file has 7 bytes); read_file returns text only`},
		{name: "binary file read from an offset", tool: "read_file", args: `{"path": "nul.txt", "offset": 4}`,
			wantErr: `"nul.txt" looks like a binary file: byte 3 is NUL`},
		{name: "NUL after the first block", tool: "read_file", args: `{"path": "late-nul.log"}`,
			wantErr: `read_file: "late-nul.log" looks like a binary file: byte 11000 is NUL; read_file returns text only`},
		{name: "not UTF-8 after the first block", tool: "read_file", args: `{"path": "late-latin1.log"}`,
			wantErr: `read_file: "late-latin1.log" is not UTF-8 text: byte 11003 is not part of a UTF-8 character`},
		{name: "the text before it can be read", tool: "read_file", args: `{"path": "late-latin1.log", "offset": 10989, "limit": 11}`,
			want: "plain text\n\n[read_file: 11 bytes from offset 10989 of the file's 11004; call read_file with offset 11000 to read on]"},
		{name: "a character across the first block's end", tool: "read_file", args: `{"path": "straddle.txt", "offset": 8191, "limit": 3}`,
			want: "€\n[read_file: 3 bytes from offset 8191 of the file's 8203; call read_file with offset 8194 to read on]"},
		{name: "half a character at the end", tool: "read_file", args: `{"path": "cut-at-eof.txt"}`,
			wantErr: `is not UTF-8 text: byte 25 is not part of a UTF-8 character`},
	})
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
	mustSymlink(t, "outdir", filepath.Join(dir, "chain"))        // a link to a link that leads out
	mustSymlink(t, outside, filepath.Join(dir, "a", "b", "out")) // a link deep in real folders
	mustSymlink(t, "..", filepath.Join(dir, "up"))
	mustSymlink(t, "/", filepath.Join(dir, "root"))
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}

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

		// A link to a folder outside, in the middle of a longer path.
		{name: "read below a link deep in the path", tool: "read_file", args: `{"path": "a/b/out/secret.txt"}`, wantErr: leaves},
		{name: "read a piece below a link", tool: "read_file", args: `{"path": "a/b/out/secret.txt", "offset": 4, "limit": 3}`, wantErr: leaves},
		{name: "list below a link deep in the path", tool: "list_files", args: `{"path": "a/b/out"}`, wantErr: leaves},
		{name: "list recursively below a link", tool: "list_files", args: `{"path": "a/b/out", "recursive": true}`, wantErr: leaves},
		{name: "write below a link deep in the path", tool: "write_file", args: `{"path": "a/b/out/new.txt", "content": "x"}`, wantErr: leaves},
		{name: "write with new folders below a link", tool: "write_file", args: `{"path": "a/b/out/sub/deeper/new.txt", "content": "x"}`, wantErr: leaves},
		{name: "write through a chain of links", tool: "write_file", args: `{"path": "chain/new.txt", "content": "x"}`, wantErr: leaves},
		{name: "write onto a link to a folder outside", tool: "write_file", args: `{"path": "outdir", "content": "x"}`, wantErr: leaves},
		// Links that climb: to the workspace's parent, to the root.
		{name: "read through a link to ..", tool: "read_file", args: `{"path": "up/outside/secret.txt"}`, wantErr: leaves},
		{name: "list a link to ..", tool: "list_files", args: `{"path": "up"}`, wantErr: leaves},
		{name: "read through a link to /", tool: "read_file", args: `{"path": "root/etc/hostname"}`, wantErr: leaves},
		{name: "write through a link to ..", tool: "write_file", args: `{"path": "up/outside/new.txt", "content": "x"}`, wantErr: leaves},
		// .. that climbs out past a folder that exists.
		{name: "read .. past a real folder", tool: "read_file", args: `{"path": "src/../../outside/secret.txt"}`, wantErr: leaves},
		{name: "write .. past a real folder", tool: "write_file", args: `{"path": "src/../../outside/new.txt", "content": "x"}`, wantErr: leaves},
		{name: "read a backslash-rooted path", tool: "read_file", args: `{"path": "\\etc\\passwd"}`, wantErr: absolute},
	})

	if got, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(got) != "top secret" {
		t.Errorf("the file outside was changed to %q", got)
	}
	if des, err := os.ReadDir(outside); err != nil || len(des) != 1 || des[0].Name() != "secret.txt" {
		t.Errorf("outside the workspace: %v, %v; want secret.txt alone", des, err)
	}
	if des, err := os.ReadDir(filepath.Dir(dir)); err != nil || len(des) != 2 {
		t.Errorf("beside the workspace: %v, %v; want ws and outside alone", des, err)
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
	_, err := env.Workspace.Root().Open("outdir/secret.txt")
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
		{name: "list: path number", tool: "list_files", args: `{"path": 3}`, wantErr: `list_files: invalid argument "path": has type "integer", want "string"`},
		{name: "list: recursive string", tool: "list_files", args: `{"recursive": "yes"}`, wantErr: `list_files: invalid argument "recursive": has type "string", want "boolean"`},
		{name: "list: unknown", tool: "list_files", args: `{"dir": "src"}`, wantErr: `list_files: invalid arguments: unexpected additional properties ["dir"] (accepted: path, recursive)`},
		{name: "read: not JSON", tool: "read_file", args: `path=a.txt`, wantErr: "read_file: arguments must be a JSON object, got text that is not valid JSON"},
		{name: "read: missing path", tool: "read_file", args: `{}`, wantErr: `read_file: invalid arguments: required: missing properties: ["path"]`},
		{name: "read: null", tool: "read_file", args: `null`, wantErr: `read_file: invalid arguments: required: missing properties: ["path"]`},
		{name: "read: path null", tool: "read_file", args: `{"path": null}`, wantErr: `read_file: invalid argument "path": has type "null", want "string"`},
		{name: "read: path array", tool: "read_file", args: `{"path": ["a"]}`, wantErr: `read_file: invalid argument "path": has type "array", want "string"`},
		{name: "write: missing content", tool: "write_file", args: `{"path": "a.txt"}`, wantErr: `write_file: invalid arguments: required: missing properties: ["content"]`},
		{name: "write: missing path", tool: "write_file", args: `{"content": "x"}`, wantErr: `write_file: invalid arguments: required: missing properties: ["path"]`},
		{name: "write: content object", tool: "write_file", args: `{"path": "a.txt", "content": {"x": 1}}`, wantErr: `write_file: invalid argument "content": has type "object", want "string"`},
		{name: "write: unknown", tool: "write_file", args: `{"path": "a.txt", "content": "x", "mode": "append"}`, wantErr: `write_file: invalid arguments: unexpected additional properties ["mode"] (accepted: content, path)`},
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
	env := Env{Workspace: openWorkspace(t, dir)}
	// Not a panic or a hang: the os.Root reports the loop when the file is used.
	if _, err := call(t, env, "write_file", `{"path": "a", "content": "x"}`); err == nil {
		t.Fatal("write through a link loop succeeded")
	}
}

// write_file refuses version control metadata, where a hook or a config
// written by the model would run at a person's next `git status`, unless
// the operator allows it; reading there stays allowed.
func TestWriteFileRefusesVCSMetadata(t *testing.T) {
	env, _ := testEnv(t)
	mustWrite(t, filepath.Join(env.Workspace.Dir(), ".git", "config"), "[core]\n")
	runCases(t, env, []toolCase{
		{name: "git config", tool: "write_file", args: `{"path": ".git/config", "content": "[core]\n\tfsmonitor = sh evil.sh\n"}`,
			wantErr: `write_file: ".git/config" is inside .git, version control metadata`},
		{name: "git hook", tool: "write_file", args: `{"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"}`,
			wantErr: `is inside .git`},
		{name: "nested repository", tool: "write_file", args: `{"path": "vendor/lib/.git/config", "content": "x"}`,
			wantErr: `is inside .git`},
		{name: "gitdir file", tool: "write_file", args: `{"path": "sub/.git", "content": "gitdir: ../evil"}`,
			wantErr: `is inside .git`},
		{name: "other case", tool: "write_file", args: `{"path": ".GIT/config", "content": "x"}`,
			wantErr: `is inside .GIT`},
		{name: "mercurial", tool: "write_file", args: `{"path": ".hg/hgrc", "content": "x"}`,
			wantErr: `is inside .hg`},
		{name: "a name that only starts alike", tool: "write_file", args: `{"path": ".gitignore", "content": "bin/\n"}`,
			want: "wrote 5 bytes to .gitignore"},
		{name: "reading is allowed", tool: "read_file", args: `{"path": ".git/config"}`,
			want: "[core]\n"},
	})
	if b, _ := os.ReadFile(filepath.Join(env.Workspace.Dir(), ".git", "config")); string(b) != "[core]\n" {
		t.Errorf(".git/config = %q, changed by a refused call", b)
	}
	env.VCSWrites = true
	runCases(t, env, []toolCase{
		{name: "allowed by the operator", tool: "write_file", args: `{"path": ".git/info/exclude", "content": "x"}`,
			want: "wrote 1 bytes to .git/info/exclude"},
	})
}

func TestWriteFileRefusesTooLarge(t *testing.T) {
	env, _ := testEnv(t)
	big, _ := json.Marshal(map[string]string{"path": "big.txt", "content": strings.Repeat("x", MaxWriteBytes+1)})
	runCases(t, env, []toolCase{
		{name: "over the cap", tool: "write_file", args: string(big),
			wantErr: fmt.Sprintf("the content is %d bytes; one call writes at most %d", MaxWriteBytes+1, MaxWriteBytes)},
	})
	if _, err := os.Stat(filepath.Join(env.Workspace.Dir(), "big.txt")); err == nil {
		t.Error("the file was written")
	}
}

// write_file decides on where a path resolves, not on its text: a checkout
// may carry a link to its own .git (git recreates `notes -> .git` on
// clone), and writing notes/config once wrote .git/config. Every component
// is followed through the workspace's os.Root, links included; reading
// there stays allowed, as it is for .git/config by its name.
func TestWriteFileDecidesOnTheResolvedFile(t *testing.T) {
	env, _ := testEnv(t)
	dir := env.Workspace.Dir()
	mustWrite(t, filepath.Join(dir, ".git", "config"), "[core]\n")
	mustWrite(t, filepath.Join(dir, "vendor", "lib", ".git", "config"), "[core]\n")
	mustWrite(t, filepath.Join(dir, "sub", "a.txt"), "a")
	if err := os.MkdirAll(filepath.Join(dir, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, ".git", filepath.Join(dir, "notes"))                          // the link git recreates
	mustSymlink(t, filepath.Join(".git", "config"), filepath.Join(dir, "cfg"))   // a link to the file itself
	mustSymlink(t, "sub/../.git/hooks", filepath.Join(dir, "hooks"))             // nested a/../.git in the target
	mustSymlink(t, filepath.Join("vendor", "lib"), filepath.Join(dir, "lib"))    // a folder holding .git/config
	mustSymlink(t, "notes", filepath.Join(dir, "chain"))                         // a link to the link
	mustSymlink(t, filepath.Join(".git", "new-file"), filepath.Join(dir, "new")) // dangling, into .git
	mustSymlink(t, "sub", filepath.Join(dir, "docs"))                            // a plain link, fine
	mustSymlink(t, "../.git", filepath.Join(dir, "sub", "up"))                   // .. out of a folder, into .git

	const refused = "version control metadata, which this worker does not let tools write"
	runCases(t, env, []toolCase{
		{name: "a link to .git", tool: "write_file", args: `{"path": "notes/config", "content": "[core]\n\tfsmonitor = sh evil.sh\n"}`,
			wantErr: `write_file: "notes/config" leads inside .git through a symbolic link, ` + refused},
		{name: "a link to .git/config", tool: "write_file", args: `{"path": "cfg", "content": "x"}`, wantErr: refused},
		{name: "a link through sub/../.git", tool: "write_file", args: `{"path": "hooks/pre-commit", "content": "#!/bin/sh\n"}`, wantErr: refused},
		{name: "a link to a folder holding .git/config", tool: "write_file", args: `{"path": "lib/.git/config", "content": "x"}`, wantErr: refused},
		{name: "a chain of links to .git", tool: "write_file", args: `{"path": "chain/hooks/post-checkout", "content": "x"}`, wantErr: refused},
		{name: "a dangling link into .git", tool: "write_file", args: `{"path": "new", "content": "x"}`, wantErr: refused},
		{name: "a link whose .. leads into .git", tool: "write_file", args: `{"path": "sub/up/config", "content": "x"}`, wantErr: refused},
		{name: "nested a/../.git in the path", tool: "write_file", args: `{"path": "sub/../.git/config", "content": "x"}`, wantErr: refused},
		{name: "a plain link", tool: "write_file", args: `{"path": "docs/b.txt", "content": "b"}`, want: "wrote 1 bytes to docs/b.txt"},
		{name: "reading through a link to .git", tool: "read_file", args: `{"path": "notes/config"}`, want: "[core]\n"},
		{name: "listing through a link to .git", tool: "list_files", args: `{"path": "notes"}`, want: "notes/config\nnotes/hooks/"},
	})
	if b, _ := os.ReadFile(filepath.Join(dir, ".git", "config")); string(b) != "[core]\n" {
		t.Errorf(".git/config = %q, changed by a refused call", b)
	}
	for _, p := range []string{".git/hooks/pre-commit", ".git/hooks/post-checkout", ".git/new-file"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); err == nil {
			t.Errorf("%s was written by a refused call", p)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "sub", "b.txt")); string(b) != "b" {
		t.Errorf("sub/b.txt = %q, want the write through the plain link", b)
	}
	env.VCSWrites = true
	runCases(t, env, []toolCase{
		{name: "allowed by the operator", tool: "write_file", args: `{"path": "notes/info/exclude", "content": "x"}`,
			want: "wrote 1 bytes to notes/info/exclude"},
	})
}

// write_file checks again, once its file is open and before it writes,
// that the file is what the path leads to now, outside version control
// metadata: a folder swapped for a link into .git between the check and
// the open is refused, and nothing is written there.
func TestWriteCheckedRefusesASwappedLink(t *testing.T) {
	tests := []struct {
		name     string
		swap     bool // notes/ is a link to .git/ by the time of the write
		allowVCS bool
		wantErr  bool
	}{
		{"nothing swapped", false, false, false},
		{"a folder swapped for a link into .git", true, false, true},
		{"the same, with VCS writes allowed", true, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			mustWrite(t, filepath.Join(dir, ".git", "config"), "[core]\n")
			if err := os.Mkdir(filepath.Join(dir, "notes"), 0o755); err != nil {
				t.Fatal(err)
			}
			root, err := os.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			// Checked as a plain folder, then swapped.
			to, err := resolve(root, "notes/config")
			if err != nil || to.vcs != "" {
				t.Fatalf("resolve = %+v, %v; want a path outside .git", to, err)
			}
			if tt.swap {
				if err := os.Remove(filepath.Join(dir, "notes")); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(".git", filepath.Join(dir, "notes")); err != nil {
					t.Skip("no symlinks:", err)
				}
			}
			err = writeChecked(root, "notes/config", to.name, []byte("[core]\n\thooksPath = /tmp/evil\n"), tt.allowVCS)
			if (err != nil) != tt.wantErr || (err != nil && !errors.Is(err, errSwapped)) {
				t.Fatalf("writeChecked = %v; want the swap refused: %v", err, tt.wantErr)
			}
			got, _ := os.ReadFile(filepath.Join(dir, ".git", "config"))
			if wrote := strings.Contains(string(got), "evil"); wrote != (tt.swap && !tt.wantErr) {
				t.Errorf(".git/config holds %q; want the write there only when it is allowed", got)
			}
		})
	}
}
