package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// realPath is filepath.EvalSymlinks for a path that may not exist yet: links
// are resolved as far as the path exists (including a dangling link, which a
// write would follow) and the rest is appended unchanged.
func realPath(p string, links *int) (string, error) {
	real, err := filepath.EvalSymlinks(p)
	if err == nil {
		return real, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	parent := filepath.Dir(p)
	if parent == p {
		return p, nil
	}
	parentReal, err := realPath(parent, links)
	if err != nil {
		return "", err
	}
	joined := filepath.Join(parentReal, filepath.Base(p))
	fi, err := os.Lstat(joined)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return joined, nil // missing: nothing more to resolve
	}
	// A dangling link: follow it by hand, since EvalSymlinks will not.
	if *links++; *links > maxLinks {
		return "", fmt.Errorf("%s: too many levels of symbolic links", p)
	}
	target, err := os.Readlink(joined)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(parentReal, target)
	}
	return realPath(target, links)
}

// within reports whether p is base or inside it; both are clean and absolute.
func within(base, p string) bool {
	rel, err := filepath.Rel(base, p)
	return err == nil && filepath.IsLocal(rel)
}
