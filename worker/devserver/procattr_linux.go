package devserver

import "syscall"

// procAttr puts the server in its own process group, so Stop can signal all of it, and
// has the kernel SIGKILL it when its parent goes away, even if the parent is SIGKILLed
// and never runs Stop: an orphaned server would hold the ports and the database.
// Pdeathsig is tied to the forking thread; Server.run keeps that thread alive.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
