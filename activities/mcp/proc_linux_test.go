package mcp

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServerDiesWithWorker kills a worker with SIGKILL, as an OOM killer or
// an operator would, and expects its stdio server to stop too, although
// this server does not stop when its input ends.
func TestServerDiesWithWorker(t *testing.T) {
	worker := exec.Command(os.Args[0])
	worker.Env = append(os.Environ(), serverEnv+"=worker")
	out, err := worker.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = worker.Process.Kill(); _ = worker.Wait() })

	line, err := bufio.NewReader(out).ReadString('\n')
	pidText, ok := strings.CutPrefix(strings.TrimSpace(line), "server ")
	pid, perr := strconv.Atoi(pidText)
	if err != nil || !ok || perr != nil {
		t.Fatalf("the worker printed %q (%v), want its server's pid", line, err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if !running(pid) {
		t.Fatalf("server %d is not running before the worker is killed", pid)
	}
	if err := worker.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for running(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("server %d still runs 20 s after its worker was killed", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// running reports whether process pid exists and is not a zombie (a zombie
// has stopped; it waits only for whichever process adopted it to reap it).
func running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses.
	_, rest, ok := strings.Cut(string(stat), ") ")
	return ok && !strings.HasPrefix(rest, "Z")
}
