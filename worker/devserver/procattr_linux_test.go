package devserver

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestPdeathsig runs a helper process that starts a long-running child through Server.run
// and then is SIGKILLed: the child must die with it, or it would hold the ports forever.
func TestPdeathsig(t *testing.T) {
	if os.Getenv("DEVSERVER_PDEATHSIG_HELPER") == "1" {
		s := &Server{
			cmd:      exec.Command("sleep", "300"),
			log:      newTail(tailLines),
			done:     make(chan struct{}),
			stopping: make(chan struct{}),
		}
		s.cmd.SysProcAttr = procAttr()
		if err := s.run(); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println(s.cmd.Process.Pid)
		// Churn goroutines that lock threads and exit, which makes the runtime retire
		// threads: with Pdeathsig on an unlocked starter thread the child would die here.
		for range 50 {
			go func() { lockAndExit() }()
		}
		time.Sleep(time.Hour)
	}
	helper := exec.Command(os.Args[0], "-test.run=^TestPdeathsig$")
	helper.Env = append(os.Environ(), "DEVSERVER_PDEATHSIG_HELPER=1")
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the helper's child pid: %v", err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("helper said %q", line)
	}
	time.Sleep(500 * time.Millisecond) // let the thread churn happen
	if gone(child) {
		t.Fatalf("the child %d died while its parent was alive (Pdeathsig fired on a retired thread)", child)
	}
	_ = helper.Process.Kill()
	_ = helper.Wait()
	waitGone(t, child)
}

// lockAndExit ends a goroutine while it is locked to its thread, so the runtime kills that
// thread.
func lockAndExit() {
	runtime.LockOSThread()
}
