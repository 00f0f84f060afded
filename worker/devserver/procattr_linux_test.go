package devserver

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPdeathsig runs a helper process that starts a long-running child through Server.run
// and then is SIGKILLed: the child must die with it, or it would hold the ports forever.
func TestPdeathsig(t *testing.T) {
	if os.Getenv("DEVSERVER_PDEATHSIG_HELPER") == "1" {
		s := &Server{
			cmd:  exec.Command("sleep", "300"),
			log:  newTail(tailLines),
			done: make(chan struct{}),
		}
		s.cmd.SysProcAttr = procAttr()
		if err := s.run(); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println(s.cmd.Process.Pid)
		// Churn goroutines that lock threads and exit, which makes the runtime retire
		// threads: with Pdeathsig on an unlocked starter thread the child would die here.
		tids := make(chan int, 50)
		for range cap(tids) {
			go func() { lockAndExit(tids) }()
		}
		// The kernel sends a parent-death signal as the thread exits, before its
		// /proc/self/task entry goes: once every churned thread's entry is gone, any
		// such signal has been sent, and the test may look at the child.
		for range cap(tids) {
			tid := <-tids
			for tid != os.Getpid() { // a locked main thread is wedged, not retired
				if _, err := os.Stat("/proc/self/task/" + strconv.Itoa(tid)); errors.Is(err, os.ErrNotExist) {
					break
				}
				runtime.Gosched()
			}
		}
		fmt.Println("retired")
		time.Sleep(time.Hour) // until the test kills it
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
	r := bufio.NewReader(out)
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("reading the helper's child pid: %v", err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("helper said %q", line)
	}
	if line, err := r.ReadString('\n'); err != nil || line != "retired\n" {
		t.Fatalf("the helper's churned threads: %q, %v; want them retired", line, err)
	}
	// A signal sent is pending until the child acts on it: both count.
	if gone(child) || killPending(child) {
		t.Fatalf("the child %d died or is dying while its parent is alive (Pdeathsig fired on a retired thread)", child)
	}
	_ = helper.Process.Kill()
	_ = helper.Wait()
	waitGone(t, child)
}

// lockAndExit ends a goroutine while it is locked to its thread, so the runtime kills that
// thread; it sends the thread's id first.
func lockAndExit(tids chan<- int) {
	runtime.LockOSThread()
	tids <- syscall.Gettid()
}

// killPending says whether pid has a SIGKILL pending, for itself or its thread group (the
// SigPnd and ShdPnd masks of /proc/PID/status).
func killPending(pid int) bool {
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(status), "\n") {
		name, mask, ok := strings.Cut(line, ":")
		if !ok || (name != "SigPnd" && name != "ShdPnd") {
			continue
		}
		if bits, err := strconv.ParseUint(strings.TrimSpace(mask), 16, 64); err == nil && bits&(1<<(syscall.SIGKILL-1)) != 0 {
			return true
		}
	}
	return false
}
