//go:build !linux

package mcp

import "os/exec"

// dieWithWorker does nothing where the kernel has no parent-death signal: a
// stdio server then stops when it reads the end of its standard input.
func dieWithWorker(*exec.Cmd) {}
