package tools

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// resolved is where a path leads inside an os.Root, followed one element
// at a time.
type resolved struct {
	// name is the path with every link replaced by where it leads: clean,
	// relative to the root, "." for the root itself. Nothing on it was a
	// link when it was walked.
	name string
	// vcs is the first element on the way that is version control
	// metadata, a link's name or an element of its target included; "" if
	// none.
	vcs string
	// link: the way went through a symbolic link.
	link bool
}

// errLeadsOut is a path that leads out of its root: ".." above it, or a
// link with an absolute target, which an os.Root never follows.
var errLeadsOut = errors.New("leads outside its folder")

// errSwapped is a file or folder that is not, once opened, the one its path
// led to when it was checked.
var errSwapped = errors.New("changed while it was opened (a symbolic link on the way was swapped); try again")

// resolve follows name, a clean and local path, inside root one element at
// a time, as the root's own methods would, and says where it leads and what
// it went through. Each element is looked at through the root, so no link
// leads the walk out of it; a link's target is walked in its place, and
// ".." goes back to the folder the walk came from, as the system does.
// Elements past one that does not exist are taken as written, as a write
// would create them.
func resolve(root *os.Root, name string) (resolved, error) {
	var (
		r       resolved
		done    []string // the folders walked so far, none of them a link
		todo    = strings.Split(filepath.ToSlash(name), "/")
		links   int
		missing bool // an element did not exist: the rest is as written
	)
	fail := func(err error) (resolved, error) {
		return resolved{}, &fs.PathError{Op: "resolve", Path: name, Err: err}
	}
	for len(todo) > 0 {
		elem := todo[0]
		todo = todo[1:]
		switch elem {
		case "", ".":
			continue
		case "..":
			switch {
			case missing:
				// The system cannot go back out of a folder that is not
				// there, and a walk that did could skip a link.
				return fail(fs.ErrNotExist)
			case len(done) == 0:
				return fail(errLeadsOut)
			}
			done = done[:len(done)-1]
			continue
		}
		if r.vcs == "" && isVCS(elem) {
			r.vcs = elem
		}
		if !missing {
			p := filepath.Join(filepath.Join(done...), elem)
			fi, err := root.Lstat(p)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				missing = true
			case err != nil:
				return resolved{}, err
			case fi.Mode()&fs.ModeSymlink != 0:
				if links++; links > maxLinks {
					return fail(errors.New("too many levels of symbolic links"))
				}
				target, err := root.Readlink(p)
				if err != nil {
					return resolved{}, err
				}
				if filepath.IsAbs(target) || filepath.VolumeName(target) != "" || strings.HasPrefix(target, "/") {
					return fail(errLeadsOut)
				}
				r.link = true
				todo = append(strings.Split(filepath.ToSlash(target), "/"), todo...)
				continue
			}
		}
		done = append(done, elem)
	}
	r.name = filepath.Join(done...)
	if r.name == "" {
		r.name = "."
	}
	return r, nil
}

// recheck makes sure that opened, a file or folder just opened by the path
// name, is what name resolves to now, and returns where that is. Between a
// check and an open, a link swapped in on the way would have led the open
// elsewhere: never out of the root, which the os.Root sees to, but perhaps
// into version control metadata.
func recheck(root *os.Root, name string, opened fs.FileInfo) (resolved, error) {
	r, err := resolve(root, name)
	if err != nil {
		return resolved{}, err
	}
	now, err := root.Lstat(r.name)
	if err != nil {
		return resolved{}, err
	}
	if !os.SameFile(opened, now) {
		return resolved{}, &fs.PathError{Op: "open", Path: name, Err: errSwapped}
	}
	return r, nil
}

// maxLinks bounds the links a walk follows, against link loops.
const maxLinks = 255
