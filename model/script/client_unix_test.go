//go:build unix

package script

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/todoflow/todoflow/model"
)

// A reference to what is not a regular file inside the folder is refused
// before it is opened: opening a named pipe would wait for a writer, and
// hold the model call until its timeout, on every attempt.
func TestCompleteRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.json"), 0o644); err != nil {
		t.Skip("no named pipes:", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "folder.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("pipe.json", filepath.Join(dir, "pipe-link.json")); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ ref, want string }{
		{"pipe.json", "is not a regular file"},
		{"pipe-link.json", "is not a regular file"},
		{"folder.json", "is a directory"},
	}
	c := New(dir)
	for _, tt := range tests {
		_, err := complete(t, c, tt.ref, 1)
		var me *model.Error
		if !errors.As(err, &me) || me.Retryable || !strings.Contains(me.Message, tt.want) {
			t.Errorf("Complete(%q) = %v; want a non-retryable error with %q", tt.ref, err, tt.want)
		}
	}
}
