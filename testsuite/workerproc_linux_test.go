package testsuite

import "syscall"

// workerProcAttr has the kernel kill a worker subprocess when the test
// process goes away (a test timeout does not run cleanups), so that no
// worker is left polling a server that is gone.
func workerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
