//go:build unix

package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A root that another user may write is refused when the worker starts:
// whoever may write it can plant a workspace of links before a run names
// it, or swap the root for a link. A parent folder writable by all is
// refused unless it is sticky, as /tmp is, where others may add entries of
// their own but not rename or remove the worker's.
func TestNewRootsRefusesRootsOthersMayWrite(t *testing.T) {
	tests := []struct {
		name             string
		parent, root     os.FileMode
		otherOwner, fail bool
	}{
		{name: "owner only", parent: 0o755, root: 0o700},
		{name: "group may write", parent: 0o755, root: 0o775},
		{name: "all may write", parent: 0o755, root: 0o777, fail: true},
		{name: "all may write, sticky", parent: 0o755, root: 0o777 | os.ModeSticky, fail: true},
		{name: "parent all may write", parent: 0o777, root: 0o755, fail: true},
		{name: "parent all may write, sticky (as /tmp)", parent: 0o777 | os.ModeSticky, root: 0o755},
		{name: "owned by another user", parent: 0o755, root: 0o755, otherOwner: true, fail: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := filepath.Join(t.TempDir(), "parent")
			root := filepath.Join(parent, "root")
			if err := os.MkdirAll(root, 0o700); err != nil {
				t.Fatal(err)
			}
			// Chmod, not Mkdir's mode, which the umask cuts.
			for dir, mode := range map[string]os.FileMode{parent: tt.parent, root: tt.root} {
				if err := os.Chmod(dir, mode); err != nil {
					t.Fatal(err)
				}
			}
			if tt.otherOwner {
				if os.Geteuid() != 0 {
					t.Skip("giving a folder to another user takes root")
				}
				if err := os.Chown(root, 65534, 65534); err != nil {
					t.Fatal(err)
				}
			}
			_, err := NewRoots(root)
			switch {
			case !tt.fail && err != nil:
				t.Errorf("NewRoots(%s) = %v, want it taken", tt.name, err)
			case tt.fail && (err == nil || !strings.Contains(err.Error(), "other users")):
				t.Errorf("NewRoots(%s) = %v, want it refused as writable by other users", tt.name, err)
			}
		})
	}
}
