package devserver

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
)

// Kill does not wait for a process that ignores SIGTERM: it sends SIGKILL to the whole
// group at once, and a killed server is not reported as one that crashed.
func TestKillIsImmediate(t *testing.T) {
	// The pid is printed once the trap is in place. A SIGTERM is told, and
	// outlived: a Kill that began with one would wait out its grace.
	s := runProcess(t, `trap "echo got TERM" TERM; sleep 300 & echo $!; while :; do wait; done`)
	child := waitForPID(t, s)
	if err := s.Kill(); err != nil {
		t.Fatalf("Kill() = %v", err)
	}
	if strings.Contains(s.log.String(), "got TERM") {
		t.Errorf("Kill sent SIGTERM; the SIGTERM grace (%s) is not for a crash", stopGrace)
	}
	if !gone(s.cmd.Process.Pid) {
		t.Errorf("the process %d survived Kill", s.cmd.Process.Pid)
	}
	waitGone(t, child)
	if err := s.Stop(); err != nil {
		t.Errorf("Stop() after Kill = %v; want Kill's nil", err)
	}
}

// A server killed mid-life and started again on the same database and port has kept what
// it had committed: a running workflow is there, and clients dialled before the kill
// reach the new server.
func TestRealServerKilledAndRestarted(t *testing.T) {
	bin := realBinary(t)
	ctx := context.Background()
	db := t.TempDir() + "/temporal.db"
	s, err := Start(ctx, Options{Binary: bin, UIPort: -1, DBFile: db, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	c, err := client.Dial(client.Options{HostPort: s.Address(), Namespace: s.Namespace()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "survivor", TaskQueue: "nobody-polls"}, "SomeWorkflow")
	if err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	if err := s.Kill(); err != nil {
		t.Fatalf("Kill() = %v", err)
	}
	t.Logf("killed in %s", time.Since(start))
	_, port, _ := net.SplitHostPort(s.Address())
	p, _ := strconv.Atoi(port)
	start = time.Now()
	s, err = Start(ctx, Options{Binary: bin, UIPort: -1, DBFile: db, Port: p, Log: testLog{t}})
	if err != nil {
		t.Fatalf("start again on %s and port %d: %v", db, p, err)
	}
	defer s.Stop()
	t.Logf("healthy again after %s", time.Since(start))

	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	d, err := c.DescribeWorkflowExecution(dctx, "survivor", run.GetRunID())
	if err != nil {
		t.Fatalf("the client of the killed server: %v", err)
	}
	if st := d.GetWorkflowExecutionInfo().GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Errorf("the workflow started before the kill is %s, want running", st)
	}
}
