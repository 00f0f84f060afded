//go:build unix

package tools

import (
	"net"
	"path/filepath"
	"syscall"
	"testing"
)

// read_file refuses what is not a regular file before it opens it: opening
// a named pipe would wait for a writer and hang the tool.
func TestReadFileRefusesSpecialFiles(t *testing.T) {
	env, dir := pipeEnv(t)
	l, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Skipf("unix sockets not available: %v", err)
	}
	defer l.Close()

	runCases(t, env, []toolCase{
		{name: "named pipe", tool: "read_file", args: `{"path": "pipe"}`,
			wantErr: `read_file: "pipe" is not a regular file (it is a named pipe); read_file reads files only`},
		{name: "link to a named pipe", tool: "read_file", args: `{"path": "pipe-link"}`,
			wantErr: `read_file: "pipe-link" is not a regular file (it is a named pipe)`},
		{name: "socket", tool: "read_file", args: `{"path": "sock"}`,
			wantErr: `read_file: "sock" is not a regular file (it is a socket)`},
	})
}

// write_file refuses what is not a regular file before it opens it: opening
// a named pipe for writing waits for a reader, and the call would hang until
// its timeout, on every attempt.
func TestWriteFileRefusesSpecialFiles(t *testing.T) {
	env, _ := pipeEnv(t)
	runCases(t, env, []toolCase{
		{name: "named pipe", tool: "write_file", args: `{"path": "pipe", "content": "x"}`,
			wantErr: `write_file: "pipe" is a named pipe, not a regular file`},
		{name: "link to a named pipe", tool: "write_file", args: `{"path": "pipe-link", "content": "x"}`,
			wantErr: `write_file: "pipe-link" leads to a named pipe, not a regular file`},
	})
}

// pipeEnv is a tool environment whose workspace holds a named pipe "pipe"
// and a link "pipe-link" to it; dir is the workspace's folder.
func pipeEnv(t *testing.T) (env Env, dir string) {
	t.Helper()
	env, _ = testEnv(t)
	dir = env.Workspace.Dir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skipf("named pipes not available: %v", err)
	}
	mustSymlink(t, "pipe", filepath.Join(dir, "pipe-link"))
	return env, dir
}
