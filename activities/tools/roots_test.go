package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
