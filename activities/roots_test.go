package activities

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"
)

// testRoots returns the roots dirs, failing the test if they are refused.
func testRoots(t *testing.T, dirs ...string) Roots {
	t.Helper()
	r, err := NewRoots(dirs...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRootsResolve(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	other := filepath.Join(base, "other")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{root, other, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(root, "link-out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/", filepath.Join(root, "slash")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(other, "checkout"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A checkout whose .git a workspace may name by its path or by a link.
	mustWrite(t, filepath.Join(root, "repo", ".git", "config"), "[core]\n")
	if err := os.MkdirAll(filepath.Join(root, "repo", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, filepath.Join("repo", ".git"), filepath.Join(root, "gitlink"))
	mustSymlink(t, filepath.Join("sub", "..", ".git"), filepath.Join(root, "repo", "nested"))
	r := testRoots(t, root, other)
	tests := []struct {
		workspace string
		want      string // the folder, or "" for a refusal
		err       string
	}{
		{"proj", filepath.Join(root, "proj"), ""},
		{"a/b/../c", filepath.Join(root, "a", "c"), ""},
		{filepath.Join(other, "checkout"), filepath.Join(other, "checkout"), ""},
		{filepath.Join(root, "new", "deep"), filepath.Join(root, "new", "deep"), ""},
		{"/", "", "not a folder inside"},
		{"/etc", "", "not a folder inside"},
		{"..", "", "leads outside the workspace roots"},
		{"../outside", "", "leads outside the workspace roots"},
		{root, "", "not a folder inside"}, // the root itself holds every workspace
		{filepath.Join(root, "..", "outside"), "", "not a folder inside"},
		{"link-out", "", "not a folder inside"},
		{"link-out/sub", "", "not a folder inside"},
		{"slash/etc", "", "not a folder inside"},
		{"", "", "is empty"},
		// Version control metadata, by where the workspace resolves.
		{"repo", filepath.Join(root, "repo"), ""},
		{"repo/.git", "", "inside .git, version control metadata"},
		{"repo/.git/hooks", "", "inside .git, version control metadata"},
		{"repo/sub/../.git", "", "inside .git, version control metadata"},
		{filepath.Join(root, "repo", ".GIT"), "", "inside .GIT, version control metadata"},
		{"gitlink", "", "inside .git, version control metadata"},
		{"repo/nested", "", "inside .git, version control metadata"},
		{"repo/.gitignore.d", filepath.Join(root, "repo", ".gitignore.d"), ""},
	}
	for _, tt := range tests {
		got, err := r.Resolve(tt.workspace)
		switch {
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("Resolve(%q) = %q, %v; want %q", tt.workspace, got, err, tt.want)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("Resolve(%q) = %q, %v; want an error with %q", tt.workspace, got, err, tt.err)
		}
	}
	if _, err := (Roots{}).Resolve("proj"); err == nil || !strings.Contains(err.Error(), "no workspace root") {
		t.Errorf("Resolve with no roots = %v, want a refusal naming the missing root", err)
	}
}

func TestNewRootsRefuses(t *testing.T) {
	inGit := filepath.Join(t.TempDir(), "repo", ".git", "roots")
	for _, dirs := range [][]string{{"relative/dir"}, {"/"}, {inGit}} {
		if _, err := NewRoots(dirs...); err == nil {
			t.Errorf("NewRoots(%q) took it", dirs)
		}
	}
}

func TestCheckWorkspace(t *testing.T) {
	root := t.TempDir()
	a := &Activities{Roots: testRoots(t, root)}
	if dir, err := a.CheckWorkspace(context.Background(), "proj"); err != nil || dir != filepath.Join(root, "proj") {
		t.Errorf("CheckWorkspace(proj) = %q, %v", dir, err)
	}
	_, err := a.CheckWorkspace(context.Background(), "/")
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || !app.NonRetryable() || app.Type() != ErrTypeWorkspace || !strings.HasPrefix(app.Message(), "workspace ") {
		t.Errorf("CheckWorkspace(/) = %v; want a non-retryable %s error naming the field", err, ErrTypeWorkspace)
	}
}

// A root must hold workspaces only: one that holds the worker's state
// folder would let a run name the dev server's database or another
// session's folder, and so would one inside the state folder anywhere but
// its workspaces folder. The check refuses every run of such a worker,
// naming why.
func TestCheckWorkspaceRefusesRootsAtTheStateFolder(t *testing.T) {
	base := t.TempDir()
	tests := []struct {
		name, root, state string
		err               string // "" for a workspace taken
	}{
		{"root holds the state folder", "r1", "r1/state", "holds the worker's state folder"},
		{"root is the state folder", "r2", "r2", "holds the worker's state folder"},
		{"root holds the state folder deep down", "r3", "r3/a/b/state", "holds the worker's state folder"},
		{"root inside the state folder", "s4/sessions", "s4", "is inside the worker's state folder"},
		{"root is the state folder's workspaces folder", "s5/" + WorkspacesFolder, "s5", ""},
		{"root inside the state folder's workspaces folder", "s6/" + WorkspacesFolder + "/team", "s6", ""},
		{"root beside the state folder", "r7", "s7", ""},
		{"root whose name starts like the state folder", "s8-roots", "s8", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &Activities{Roots: testRoots(t, filepath.Join(base, tt.root)), StateDir: filepath.Join(base, tt.state)}
			dir, err := a.CheckWorkspace(context.Background(), "proj")
			switch {
			case tt.err == "" && err != nil:
				t.Errorf("CheckWorkspace = %v, want the workspace taken", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Errorf("CheckWorkspace = %q, %v; want an error with %q", dir, err, tt.err)
			}
			// A tool call checks again, on the worker that runs it.
			_, err = executeRunTool(t, a, RunToolInput{WorkflowID: "wf", Workspace: "proj", Call: toolCall("list_files", `{}`)})
			if tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("RunTool = %v, want an error with %q", err, tt.err)
			}
		})
	}
}
