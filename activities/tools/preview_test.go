package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/api"
)

// write_file's preview is the diff the write would make, with the write's
// own checks and diff, and nothing written: a new file, a changed one, and
// the calls the write would refuse, refused with the write's error.
func TestPreviewWrite(t *testing.T) {
	env, outside := testEnv(t)
	ws := env.Workspace.Dir()
	mustWrite(t, filepath.Join(ws, "old.txt"), "one\ntwo\nthree\n")
	mustWrite(t, filepath.Join(ws, "same.txt"), "same\n")
	mustWrite(t, filepath.Join(ws, "blob.bin"), "PK\x03\x04\x00\x00")
	mustWrite(t, filepath.Join(ws, "adir", "inside"), "")
	mustSymlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(ws, "out-link"))
	tool, _ := DefaultRegistry().Lookup("write_file")
	p, ok := tool.(Previewer)
	if !ok {
		t.Fatal("write_file shows no preview")
	}
	write := func(path, content string) string {
		args, _ := json.Marshal(map[string]string{"path": path, "content": content})
		return string(args)
	}
	for _, tt := range []struct {
		name    string
		args    string
		want    api.CallDiff
		wantErr string
	}{
		{"a new file, in a folder that is not there yet", write("sub/new.txt", "a\nb\n"),
			api.CallDiff{Hunks: "@@ -0,0 +1,2 @@\n+a\n+b", Added: 2, New: true}, ""},
		{"a changed file", write("old.txt", "one\n2\nthree\nfour\n"),
			api.CallDiff{Hunks: "@@ -1,3 +1,4 @@\n one\n-two\n+2\n three\n+four", Added: 2, Removed: 1}, ""},
		{"unchanged", write("same.txt", "same\n"), api.CallDiff{Hunks: `\ no change: the file already had this content`}, ""},
		{"a binary file is not compared", write("blob.bin", "text\n"),
			api.CallDiff{Hunks: `\ the previous content (6 bytes) is not text, so it is not compared: it looks like a binary file: byte 4 is NUL`}, ""},
		{"outside the workspace", write("../outside/secret.txt", "x"), api.CallDiff{}, `path "../outside/secret.txt" leads outside the workspace`},
		{"outside through a link", write("out-link", "x"), api.CallDiff{}, `path "out-link" leads outside the workspace`},
		{"too large", write("big.txt", strings.Repeat("x", MaxWriteBytes+1)), api.CallDiff{},
			fmt.Sprintf("the content is %d bytes; one call writes at most %d", MaxWriteBytes+1, MaxWriteBytes)},
		{"a folder", write("adir", "y"), api.CallDiff{}, `"adir" is a folder, not a file`},
		{"malformed arguments", `{"path": "x"}`, api.CallDiff{}, `missing properties: ["content"]`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := p.Preview(context.Background(), env, json.RawMessage(tt.args))
			switch {
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("Preview = %+v, %v; want the error %q", got, err, tt.wantErr)
			case tt.wantErr == "" && (err != nil || got != tt.want):
				t.Fatalf("Preview = %+v, %v\nwant      %+v", got, err, tt.want)
			}
		})
	}
	// Nothing was written: no file, no folder, the old files as they were.
	for _, name := range []string{"sub", "big.txt"} {
		if _, err := os.Lstat(filepath.Join(ws, name)); err == nil {
			t.Errorf("the preview made %s", name)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "old.txt")); string(b) != "one\ntwo\nthree\n" {
		t.Errorf("old.txt is now %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "top secret" {
		t.Errorf("the file outside is now %q", b)
	}
}
