package tools

import (
	"path/filepath"
	"slices"
	"strings"
)

// vcsNames are the metadata folders of version control systems. Writing
// there is how a model turns a checkout into code execution: a hook, or a
// config naming a program (core.fsmonitor, core.pager), runs as the person
// who next types `git status`.
var vcsNames = []string{".git", ".hg", ".svn", ".bzr", ".jj", "_darcs"}

// isVCS reports whether the path element elem is version control metadata.
// Names are compared without case, as case-insensitive file systems (macOS,
// Windows) would open them.
func isVCS(elem string) bool {
	return slices.ContainsFunc(vcsNames, func(v string) bool { return strings.EqualFold(elem, v) })
}

// vcsFolder returns the first element of the path name that is version
// control metadata, or "".
func vcsFolder(name string) string {
	for part := range strings.SplitSeq(filepath.ToSlash(name), "/") {
		if isVCS(part) {
			return part
		}
	}
	return ""
}
