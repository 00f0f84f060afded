package mcp

import (
	"os/exec"
	"syscall"
)

// dieWithWorker asks the kernel to stop the server when the worker dies,
// even by SIGKILL. Without it a server that does not read its standard input
// (busy in a call, or waiting on its own children) outlives the worker and
// holds its files and ports until someone notices.
func dieWithWorker(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
