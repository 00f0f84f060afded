package tools

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// EnvWorkspaceRoots is the environment variable of a worker's workspace
// roots: absolute folders, separated by the system's list separator (':'
// on Unix), as in PATH.
const EnvWorkspaceRoots = "TODOFLOW_WORKSPACE_ROOTS"

// Roots are the folders a worker's operator allows workspaces in. A run's
// `workspace` must name a folder strictly inside one of them: the input
// comes from whoever may start a workflow in the namespace, and a
// workspace of "/" would give the model every file the worker's user can
// read or write.
//
// The zero Roots allows no named workspace at all; runs then get the
// default folder under the state folder, as every run that names none.
type Roots struct {
	dirs []string // absolute, symbolic links resolved
}

// NewRoots returns the roots dirs. Each must be an absolute folder; one that
// does not exist yet is created, so that a fresh worker can name the folder
// its checkouts will go to. A root is refused when other users may change
// what it holds (othersMayWrite) or when its resolved path goes through
// version control metadata.
func NewRoots(dirs ...string) (Roots, error) {
	var r Roots
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if !filepath.IsAbs(d) {
			return Roots{}, fmt.Errorf("workspace root %q is relative: name an absolute folder", d)
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return Roots{}, fmt.Errorf("workspace root: %w", err)
		}
		real, err := filepath.EvalSymlinks(d)
		if err != nil {
			return Roots{}, fmt.Errorf("workspace root %q: %w", d, err)
		}
		real = filepath.Clean(real)
		if real == string(filepath.Separator) {
			return Roots{}, fmt.Errorf("workspace root %q is the file system's root: name a folder that holds only workspaces", d)
		}
		if v := vcsFolder(real); v != "" {
			return Roots{}, fmt.Errorf("workspace root %q resolves to %s, inside %s, version control metadata: name a folder outside any repository's metadata", d, real, v)
		}
		if why, err := othersMayWrite(real); err != nil || why != "" {
			if err != nil {
				return Roots{}, fmt.Errorf("workspace root %q: %w", d, err)
			}
			return Roots{}, fmt.Errorf("workspace root %q may be changed by other users: %s; they could plant links in a workspace before a run names it, or swap the root itself (make it the worker's own, writable by no one else)", d, why)
		}
		r.dirs = append(r.dirs, real)
	}
	return r, nil
}

// CheckStateDir refuses roots that hold the worker's state folder dir, and
// roots inside it anywhere but its workspaces folder (WorkspacesFolder):
// the state folder holds the embedded server's database, the other
// sessions' folders and the reports, none of which a run may name as its
// workspace or reach from one. An empty dir is no state folder.
func (r Roots) CheckStateDir(dir string) error {
	if dir == "" {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("state folder %q: %w", dir, err)
	}
	state, err := realPath(abs, new(int))
	if err != nil {
		return fmt.Errorf("state folder %q: %w", dir, err)
	}
	for _, root := range r.dirs {
		switch {
		case within(root, state):
			return fmt.Errorf("root %s holds the worker's state folder %s (the embedded server's database, other sessions' folders): the operator must name roots beside it", root, state)
		case within(state, root) && !within(filepath.Join(state, WorkspacesFolder), root):
			return fmt.Errorf("root %s is inside the worker's state folder %s: the operator must name a root beside it, or inside its %s folder", root, state, WorkspacesFolder)
		}
	}
	return nil
}

// WorkspacesFolder is the folder of the state folder that a worker which
// names no root takes as its root; it is the only part of the state folder
// a root may be in.
const WorkspacesFolder = "workspaces"

// String lists the roots for an error message.
func (r Roots) String() string {
	if len(r.dirs) == 0 {
		return "none"
	}
	return strings.Join(r.dirs, ", ")
}

// Resolve returns the absolute folder that a run's `workspace` names: a
// relative name is inside the first root, an absolute one must be inside
// one of the roots. The folder may not exist yet; as far as it does, its
// symbolic links are followed, so that a link inside a root cannot lead
// out of it, and the folder it resolves to may not be, or be inside,
// version control metadata. The errors are for whoever started the run.
func (r Roots) Resolve(workspace string) (string, error) {
	root, rel, err := r.locate(workspace)
	if err != nil {
		return "", err
	}
	return filepath.Join(root, rel), nil
}

// locate returns the root that holds the folder workspace resolves to, and
// that folder relative to the root (see Resolve).
func (r Roots) locate(workspace string) (root, rel string, err error) {
	if len(r.dirs) == 0 {
		return "", "", errors.New("this worker allows no named workspace (it has no workspace root): leave workspace out for a folder of the run's own")
	}
	if workspace == "" {
		return "", "", errors.New("is empty")
	}
	p := workspace
	if !filepath.IsAbs(p) {
		if !filepath.IsLocal(p) {
			return "", "", fmt.Errorf("%q leads outside the workspace roots (%s)", workspace, r)
		}
		p = filepath.Join(r.dirs[0], p)
	}
	real, err := realPath(filepath.Clean(p), new(int))
	if err != nil {
		return "", "", fmt.Errorf("%q: %w", workspace, err)
	}
	for _, root := range r.dirs {
		if real != root && within(root, real) {
			rel, err := filepath.Rel(root, real)
			if err != nil {
				return "", "", fmt.Errorf("%q: %w", workspace, err)
			}
			if v := vcsFolder(rel); v != "" {
				return "", "", vcsWorkspace(workspace, real, v)
			}
			return root, rel, nil
		}
	}
	return "", "", fmt.Errorf("%q is not a folder inside one of the worker's workspace roots (%s): name one inside a root, relative to %s or absolute", workspace, r, r.dirs[0])
}

// vcsWorkspace refuses the workspace that resolves to dir, inside the
// version control metadata folder vcs.
func vcsWorkspace(workspace, dir, vcs string) error {
	return fmt.Errorf("%q resolves to %s, inside %s, version control metadata, which no workspace may be: a model writing there (a hook, core.fsmonitor) runs its commands at the next git command; name the checkout's folder", workspace, dir, vcs)
}

// Open creates, as needed, and opens the folder a run's `workspace` names
// (see Resolve). The folder is reached from its root's handle, one element
// at a time (resolve), and once opened it is checked to be the folder the
// path leads to (recheck): a link swapped in on the way since Resolve can
// neither lead out of the root nor into version control metadata. The
// caller closes the workspace.
func (r Roots) Open(workspace string) (Workspace, error) {
	base, rel, err := r.locate(workspace)
	if err != nil {
		return Workspace{}, err
	}
	top, err := os.OpenRoot(base)
	if err != nil {
		return Workspace{}, fmt.Errorf("%q: open its root: %w", workspace, err)
	}
	defer top.Close()
	to, err := resolve(top, rel)
	if err != nil {
		return Workspace{}, fmt.Errorf("%q: %w", workspace, err)
	}
	if to.vcs != "" {
		return Workspace{}, vcsWorkspace(workspace, filepath.Join(base, to.name), to.vcs)
	}
	if err := top.MkdirAll(to.name, 0o755); err != nil {
		return Workspace{}, fmt.Errorf("%q: create workspace: %w", workspace, err)
	}
	dir, err := top.OpenRoot(to.name)
	if err != nil {
		return Workspace{}, fmt.Errorf("%q: open workspace: %w", workspace, err)
	}
	fi, err := dir.Stat(".")
	if err == nil {
		if to, err = recheck(top, rel, fi); err == nil && to.vcs != "" {
			err = vcsWorkspace(workspace, filepath.Join(base, to.name), to.vcs)
		}
	}
	if err != nil {
		dir.Close()
		return Workspace{}, fmt.Errorf("%q: %w", workspace, err)
	}
	return Workspace{dir: filepath.Join(base, to.name), root: dir}, nil
}
