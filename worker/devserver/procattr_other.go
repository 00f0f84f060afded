//go:build unix && !linux

package devserver

import "syscall"

// procAttr puts the server in its own process group, so Stop can signal all of it. There
// is no Pdeathsig outside Linux: a server whose parent is SIGKILLed outlives it there.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
