package devserver

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestLockDBExcludesASecondServer(t *testing.T) {
	db := filepath.Join(t.TempDir(), "temporal.db")
	unlock, err := lockDB(db)
	if err != nil {
		t.Fatal(err)
	}
	// flock belongs to the open file description, so a second open in this process is
	// refused exactly like another process would be.
	_, err = lockDB(db)
	if !errors.Is(err, ErrDBInUse) || !strings.Contains(err.Error(), "worker --dev") || !strings.Contains(err.Error(), db) {
		t.Errorf("second lockDB() = %v; want ErrDBInUse naming the file and who may hold it", err)
	}
	unlock()
	unlock2, err := lockDB(db)
	if err != nil {
		t.Fatalf("lockDB() after unlock = %v", err)
	}
	unlock2()
}

// TestLockDBSeesSQLiteConnections holds SQLite's WAL lock from another process, as a
// server that todoflow did not start would, and checks that lockDB refuses the file
// while it is held and takes it once it is released.
func TestLockDBSeesSQLiteConnections(t *testing.T) {
	db := filepath.Join(t.TempDir(), "temporal.db")
	if err := os.WriteFile(db+"-shm", make([]byte, 32*1024), 0o644); err != nil {
		t.Fatal(err)
	}
	unlock, err := lockDB(db)
	if err != nil {
		t.Fatalf("lockDB() with an -shm file nobody holds = %v", err)
	}
	unlock()

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "TODOFLOW_HOLD_SHM="+db+"-shm")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "locked" {
		t.Fatalf("the helper did not take the lock: %q, %v", line, err)
	}

	_, err = lockDB(db)
	want := fmt.Sprintf("open in another process (pid %d)", cmd.Process.Pid)
	if !errors.Is(err, ErrDBInUse) || !strings.Contains(err.Error(), want) {
		t.Errorf("lockDB() while SQLite's lock is held = %v; want ErrDBInUse saying %q", err, want)
	}
	// The refusal must not keep our own flock: the holder is what blocks the file.
	f, err := os.Open(db + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Errorf("lockDB() kept its flock after refusing the file: %v", err)
	}
	f.Close()

	stdin.Close() // the helper exits, and the kernel drops its lock
	_ = cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for {
		unlock, err := lockDB(db)
		if err == nil {
			unlock()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lockDB() after the holder exited = %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMain doubles as the helper of TestLockDBSeesSQLiteConnections: with
// TODOFLOW_HOLD_SHM set, it holds a read lock on that file's DMS byte, as an open SQLite
// connection does, until its stdin closes.
func TestMain(m *testing.M) {
	if shm := os.Getenv("TODOFLOW_HOLD_SHM"); shm != "" {
		f, err := os.OpenFile(shm, os.O_RDWR, 0)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		lk := syscall.Flock_t{Type: syscall.F_RDLCK, Whence: 0, Start: sqliteDMSByte, Len: 1}
		if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("locked")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		os.Exit(0)
	}
	os.Exit(m.Run())
}
