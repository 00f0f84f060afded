//go:build !linux

package testsuite

import "syscall"

func workerProcAttr() *syscall.SysProcAttr { return nil }
