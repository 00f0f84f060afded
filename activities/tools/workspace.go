package tools

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Workspace is the folder a tool call works in, opened once as an os.Root:
// every file operation of the call goes through that handle, never through
// the folder's path again, so that a folder swapped for a link after it was
// checked cannot lead the call elsewhere. Paths from the model are
// relative to it; Clean refuses those whose text leads out of it, and the
// os.Root refuses the rest, links included.
//
// RunTool opens the workspace of each call (a run's named workspace through
// its root's handle, see Roots.Open) and closes it when the call ends. The
// zero Workspace has no folder: Root is nil and Clean fails.
type Workspace struct {
	dir  string
	root *os.Root
}

// OpenWorkspace creates the folder dir if needed and opens it; a relative
// dir is taken from the current directory. It opens by path, which suits a
// folder only the worker writes (the state folder's sessions); a run's
// named workspace is opened through its root instead (Roots.Open). The
// caller closes it.
func OpenWorkspace(dir string) (Workspace, error) {
	if dir == "" {
		return Workspace{}, errors.New("workspace folder is empty")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Workspace{}, fmt.Errorf("workspace %q: %w", dir, err)
	}
	// The folder is there on every call but a run's first: opening it
	// first spares MkdirAll's stat.
	root, err := os.OpenRoot(abs)
	if err != nil {
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return Workspace{}, fmt.Errorf("create workspace %s: %w", abs, err)
		}
		if root, err = os.OpenRoot(abs); err != nil {
			return Workspace{}, fmt.Errorf("open workspace %s: %w", abs, err)
		}
	}
	return Workspace{dir: abs, root: root}, nil
}

// Dir returns the absolute path of the workspace folder, for messages and
// for what must name it (a process's working directory). Files are reached
// through Root.
func (w Workspace) Dir() string { return w.dir }

// Root returns the open workspace folder. It belongs to the Workspace: a
// tool uses it and leaves it open.
func (w Workspace) Root() *os.Root { return w.root }

// Close closes the workspace folder.
func (w Workspace) Close() error {
	if w.root == nil {
		return nil
	}
	return w.root.Close()
}

// Clean checks a path the model gave and returns it cleaned, relative to the
// workspace, ready for Root. It refuses an empty path, an absolute one and
// one whose ".." leads out of the workspace, in words a model understands.
// Symbolic links are Root's to follow: it refuses those that lead out, and
// write_file follows them itself (resolve) to see where a write would land.
func (w Workspace) Clean(name string) (string, error) {
	if w.root == nil {
		return "", errors.New("no workspace folder")
	}
	if name == "" {
		return "", errors.New("path is empty")
	}
	if filepath.IsAbs(name) || strings.HasPrefix(name, "/") || strings.HasPrefix(name, `\`) || filepath.VolumeName(name) != "" {
		return "", fmt.Errorf("path %q is absolute; paths are relative to the workspace", name)
	}
	if !filepath.IsLocal(name) {
		return "", fmt.Errorf("path %q leads outside the workspace", name)
	}
	return filepath.Clean(name), nil
}
