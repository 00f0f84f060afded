package activities

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/api"
)

// Session keys tell apart what the workflow id alone did not (issue 36): a
// new session that takes a closed one's id, and ids that the legacy folder
// name maps to one name.
func TestSessionKey(t *testing.T) {
	long := strings.Repeat("x", 200)
	// The legacy name of long: a 128-byte id spelling it is a session of
	// its own.
	spelt := legacyFolder(long)
	tests := []struct {
		name           string
		idA, runA      string
		idB, runB      string
		wantSameFolder bool
	}{
		{"one session, two agents' calls", "s", "run-1", "s", "run-1", true},
		{"a new session under a closed one's id", "s", "run-1", "s", "run-2", false},
		{"ids the legacy name mangled alike", "a/b", "run-1", "a%2Fb", "run-1", false},
		{"a long id and the 128-byte id of its legacy name", long, "run-1", spelt, "run-1", false},
		{"the id's end moved into the run id", "ab", "c", "a", "bc", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := SessionKey(tt.idA, tt.runA), SessionKey(tt.idB, tt.runB)
			if (a == b) != tt.wantSameFolder {
				t.Errorf("SessionKey(%q, %q) = %s, SessionKey(%q, %q) = %s; want the same: %v", tt.idA, tt.runA, a, tt.idB, tt.runB, b, tt.wantSameFolder)
			}
			if err := api.CheckSessionKey(a); err != nil {
				t.Errorf("CheckSessionKey(SessionKey(...)) = %v", err)
			}
		})
	}
	if legacyFolder(long) != legacyFolder(spelt) {
		t.Fatal("the legacy names of the long id and of its spelling differ: the case above shows nothing")
	}
}

// A tool call works in its session's folder, whatever the workflow id:
// a new session under a closed session's id does not see its files, and
// a key that is no key is refused rather than taken as a path.
func TestRunToolSessionFolders(t *testing.T) {
	first, again := SessionKey("chat", "run-1"), SessionKey("chat", "run-2")
	tests := []struct {
		name    string
		in      RunToolInput
		want    string // the listing's content, or the error's
		wantErr bool
	}{
		{"the session that wrote it", RunToolInput{WorkflowID: "chat", Session: first}, "secret.txt", false},
		{"a new session with the same id", RunToolInput{WorkflowID: "chat", Session: again}, "the workspace is empty", false},
		{"a key that names a path", RunToolInput{WorkflowID: "chat", Session: "../" + first[3:]}, "want the 64 hexadecimal digits", true},
		{"a key in capitals", RunToolInput{WorkflowID: "chat", Session: strings.ToUpper(first)}, "want the 64 hexadecimal digits", true},
	}
	state := t.TempDir()
	a := &Activities{StateDir: state}
	in := RunToolInput{WorkflowID: "chat", Session: first, Call: toolCall("write_file", `{"path": "secret.txt", "content": "s3cret"}`)}
	if res, err := executeRunTool(t, a, in); err != nil || res.IsError {
		t.Fatalf("write: %+v, %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(state, SessionsFolder, first, "secret.txt")); err != nil {
		t.Fatalf("the write is not in the session's folder: %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Call = toolCall("list_files", `{}`)
			res, err := executeRunTool(t, a, tt.in)
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("RunTool = %+v, %v; want an error containing %q", res, err, tt.want)
				}
				return
			}
			if err != nil || res.IsError || !strings.Contains(res.Content, tt.want) {
				t.Fatalf("RunTool = %+v, %v; want a listing with %q", res, err, tt.want)
			}
		})
	}
}

func TestLegacyFolder(t *testing.T) {
	tests := []struct{ id, want string }{
		{"session-1", "session-1"},
		{"parent/child", "parent%2Fchild"},
		{"parent_child", "parent_child"},
		{"a/b/c", "a%2Fb%2Fc"},
		{"we ird:id%", "we%20ird%3Aid%25"},
		{"..", "%2E%2E"},
		{".", "%2E"},
		{"../../etc", "..%2F..%2Fetc"}, // one name, so it cannot climb
		{"ünï", "%C3%BCn%C3%AF"},
	}
	for _, tt := range tests {
		if got := legacyFolder(tt.id); got != tt.want {
			t.Errorf("legacyFolder(%q) = %q, want %q", tt.id, got, tt.want)
		}
	}
	long := strings.Repeat("x/", 200)
	a, b := legacyFolder(long), legacyFolder(long+"y")
	if len(a) != maxLegacyFolder || len(b) != maxLegacyFolder || a == b {
		t.Errorf("long ids: %q (%d), %q (%d); want distinct names of %d bytes", a, len(a), b, len(b), maxLegacyFolder)
	}
}
