package devserver

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
)

// realBinary returns the temporal CLI, building it when missing (.ci/run builds it first,
// so tests normally find it). Only a binary that cannot be obtained at all skips the test.
func realBinary(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Minute)
	defer cancel()
	bin, err := BinaryPath(ctx, os.Stderr)
	if err != nil {
		t.Skipf("no Temporal CLI binary and it cannot be built here, so no real server to test against: %v", err)
	}
	return bin
}

// testLog sends the server's output to the test log, shown when a test fails.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func listAttrs(t *testing.T, c client.Client, ns string) map[string]enumspb.IndexedValueType {
	t.Helper()
	resp, err := c.OperatorService().ListSearchAttributes(context.Background(), &operatorservice.ListSearchAttributesRequest{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetCustomAttributes()
}

func TestRealServer(t *testing.T) {
	bin := realBinary(t)
	ctx := context.Background()
	start := time.Now()
	s, err := Start(ctx, Options{
		Binary:           bin,
		SearchAttributes: map[string]string{"TodoTotal": "Int", "TodoCurrent": "Keyword"},
		Log:              testLog{t},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("healthy at %s (UI %s) after %s", s.Address(), s.UIAddress(), time.Since(start))
	t.Cleanup(func() { _ = s.Stop() })
	if s.Namespace() != "default" || s.UIAddress() == "" || s.UIAddress() == s.Address() {
		t.Errorf("Namespace() = %q, UIAddress() = %q, Address() = %q", s.Namespace(), s.UIAddress(), s.Address())
	}

	c, err := client.Dial(client.Options{HostPort: s.Address(), Namespace: s.Namespace()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
		t.Fatalf("CheckHealth: %v", err)
	}

	t.Run("web UI answers", func(t *testing.T) {
		resp, err := http.Get("http://" + s.UIAddress() + "/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET / on the UI: %s", resp.Status)
		}
	})

	t.Run("search attributes", func(t *testing.T) {
		got := listAttrs(t, c, s.Namespace())
		if got["TodoTotal"] != enumspb.INDEXED_VALUE_TYPE_INT || got["TodoCurrent"] != enumspb.INDEXED_VALUE_TYPE_KEYWORD {
			t.Errorf("registered at launch: %v", got)
		}
		extra := map[string]string{"TodoTotal": "Int", "TodoflowTestAttr": "Keyword"}
		for i := range 2 { // the second call finds everything in place
			if err := EnsureSearchAttributes(ctx, c, s.Namespace(), extra); err != nil {
				t.Fatalf("EnsureSearchAttributes call %d: %v", i+1, err)
			}
		}
		if got := listAttrs(t, c, s.Namespace()); got["TodoflowTestAttr"] != enumspb.INDEXED_VALUE_TYPE_KEYWORD {
			t.Errorf("TodoflowTestAttr not added: %v", got)
		}
		err := EnsureSearchAttributes(ctx, c, s.Namespace(), map[string]string{"TodoTotal": "Keyword"})
		if err == nil || !strings.Contains(err.Error(), "temporal operator search-attribute") {
			t.Errorf("a type conflict gave %v; want an error naming the command to run", err)
		}
	})

	t.Run("port in use", func(t *testing.T) {
		_, port, _ := net.SplitHostPort(s.Address())
		p, _ := strconv.Atoi(port)
		_, err := Start(ctx, Options{Binary: bin, Port: p, UIPort: -1})
		if !errors.Is(err, ErrPortInUse) {
			t.Errorf("second server on %s: %v; want ErrPortInUse", s.Address(), err)
		}
	})

	pid := s.cmd.Process.Pid
	db := s.tempDir
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if !gone(pid) {
		t.Errorf("the server process %d is still alive after Stop", pid)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("the temporary database folder %s was not removed: %v", db, err)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	select {
	case <-s.done:
	default:
		t.Errorf("the process has not exited after Stop")
	}
}

// TestRealServerPersistentDB restarts a server on the same database file with one more
// search attribute: the namespace exists already, so the server itself does not add it and
// Start must.
func TestRealServerPersistentDB(t *testing.T) {
	bin := realBinary(t)
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "state", "nested", "temporal.db") // folders do not exist yet

	s, err := Start(ctx, Options{Binary: bin, UIPort: -1, DBFile: db, Namespace: "todoflow-test",
		SearchAttributes: map[string]string{"TodoTotal": "Int"}, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	if s.UIAddress() != "" {
		t.Errorf("UIAddress() = %q with the UI off", s.UIAddress())
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("Stop removed the caller's database: %v", err)
	}

	s, err = Start(ctx, Options{Binary: bin, UIPort: -1, DBFile: db, Namespace: "todoflow-test",
		SearchAttributes: map[string]string{"TodoTotal": "Int", "TodoCurrent": "Keyword"}, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	c, err := client.Dial(client.Options{HostPort: s.Address(), Namespace: s.Namespace()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := listAttrs(t, c, "todoflow-test")
	if got["TodoTotal"] != enumspb.INDEXED_VALUE_TYPE_INT || got["TodoCurrent"] != enumspb.INDEXED_VALUE_TYPE_KEYWORD {
		t.Errorf("after a restart with a new attribute: %v", got)
	}
}

func TestRealServerBrokenDatabase(t *testing.T) {
	bin := realBinary(t)
	db := filepath.Join(t.TempDir(), "temporal.db")
	if err := os.WriteFile(db, []byte(strings.Repeat("not a database ", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Start(context.Background(), Options{Binary: bin, UIPort: -1, DBFile: db})
	if err == nil {
		t.Fatal("Start succeeded on a corrupt database")
	}
	// Noticed by the exit, not by the ready timeout, which would end with
	// another error.
	if !strings.Contains(err.Error(), "exited during startup") {
		t.Errorf("error does not explain the early exit: %v", err)
	}
	t.Logf("as expected: %v", err)
}

// TestRealServerDBInUse checks that a database file serves one server at a time: a second
// Start on it fails at once with ErrDBInUse, whether the first server was started by
// todoflow or by hand, and the file is free again once the first server stopped.
func TestRealServerDBInUse(t *testing.T) {
	bin := realBinary(t)
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "temporal.db")

	s, err := Start(ctx, Options{Binary: bin, UIPort: -1, DBFile: db, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	// The second server's binary says if anything runs it: the refusal
	// must come before any process does (no version asked, no server).
	ran := filepath.Join(t.TempDir(), "ran")
	_, err = Start(ctx, Options{Binary: fakeBinary(t, "touch "+ran), UIPort: -1, DBFile: db})
	if !errors.Is(err, ErrDBInUse) {
		t.Errorf("a second server on the same file: %v; want ErrDBInUse", err)
	}
	if _, statErr := os.Stat(ran); statErr == nil {
		t.Errorf("the refusal ran the binary; it should not start anything")
	}
	start := time.Now()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("a graceful stop on a persistent database took %s", time.Since(start))

	// A server todoflow did not start holds no flock of ours; SQLite's lock gives it away.
	_, port, _ := net.SplitHostPort(mustFreeAddr(t))
	cmd := exec.Command(bin, "server", "start-dev", "--headless", "--ip", host, "--port", port,
		"--db-filename", db, "--sqlite-pragma", "journal_mode=wal", "--log-level", "error")
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		pid, err := sqliteHolder(db)
		if err == nil && pid != 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the hand-started server never opened %s (last check: pid %d, %v)", db, pid, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, err = Start(ctx, Options{Binary: bin, UIPort: -1, DBFile: db})
	if !errors.Is(err, ErrDBInUse) || !strings.Contains(err.Error(), "open in another process") {
		t.Errorf("Start beside a hand-started server: %v; want ErrDBInUse", err)
	}
}

func mustFreeAddr(t *testing.T) string {
	t.Helper()
	ports, err := freePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort(host, strconv.Itoa(ports[0]))
}
