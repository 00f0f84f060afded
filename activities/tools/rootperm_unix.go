//go:build unix

package tools

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// othersMayWrite says how a user other than the worker's may change what
// the folder dir (absolute, links resolved) holds, or "" if none may:
//
//   - dir and every folder above it must belong to the worker's user or to
//     root, since an owner may change a folder's mode at any time;
//   - dir may not be writable by others, sticky or not: anyone could add a
//     workspace of links before a run names it;
//   - a folder above dir may be writable by others only when sticky, as
//     /tmp is: others may add entries of their own there, but not rename
//     or replace the worker's.
//
// Group write is left to the operator, whose group it is.
func othersMayWrite(dir string) (string, error) {
	uid := os.Geteuid()
	for p := dir; ; p = filepath.Dir(p) {
		fi, err := os.Lstat(p)
		if err != nil {
			return "", err
		}
		m := fi.Mode()
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != uid && st.Uid != 0 {
			return fmt.Sprintf("%s belongs to user %d", p, st.Uid), nil
		}
		if m.Perm()&0o002 != 0 && (p == dir || m&fs.ModeSticky == 0) {
			return fmt.Sprintf("%s is writable by every user (mode %s)", p, m), nil
		}
		if filepath.Dir(p) == p {
			return "", nil
		}
	}
}
