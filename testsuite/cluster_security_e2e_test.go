package testsuite

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The tests of this file try deploy/cluster.sh as a local user would who wants root, the
// database's secrets or another's process (issue 36): each attack is one that worked on
// the script before, run as root as CI runs it.

// TestClusterUntrustedFolder: `up` refuses a folder whose content another user could
// have written, before it runs, kills or chowns anything there.
func TestClusterUntrustedFolder(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the attacks are on cluster.sh run as root (a folder given to nobody)")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no user nobody to own a folder: %v", err)
	}
	nobodyUID, _ := strconv.Atoi(nobody.Uid)
	for _, tc := range []struct {
		name string
		// plant prepares the cluster's folder dir (or moves it, returning the new path)
		// as another user could have; after checks what must still hold once up refused.
		plant   func(t *testing.T, dir string) string
		after   func(t *testing.T, dir string)
		wantErr string
	}{{
		name:    "a planted cluster.env is not run",
		plant:   plantEnv("touch %s\n"),
		after:   notRun,
		wantErr: "cluster.env: line 1 is not NAME=VALUE",
	}, {
		name:    "a value is not run either",
		plant:   plantEnv("PG_BIN=$(touch %s)\n"),
		after:   notRun,
		wantErr: "line 1: PG_BIN's value is not a plain one",
	}, {
		name: "another user's folder",
		plant: func(t *testing.T, dir string) string {
			if err := os.Chown(dir, nobodyUID, -1); err != nil {
				t.Fatal(err)
			}
			return dir
		},
		wantErr: "belongs to nobody",
	}, {
		name: "a folder others may write",
		plant: func(t *testing.T, dir string) string {
			if err := os.Chmod(dir, 0o777); err != nil {
				t.Fatal(err)
			}
			return dir
		},
		wantErr: "its mode 777 lets others than its owner write in it",
	}, {
		name: "a folder above it others may write",
		plant: func(t *testing.T, dir string) string {
			open := filepath.Join(dir, "open")
			if err := os.Mkdir(open, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(open, 0o777); err != nil { // no sticky bit, unlike /tmp
				t.Fatal(err)
			}
			return filepath.Join(open, "cluster")
		},
		wantErr: "open above it is not safe",
	}, {
		name: "no chown through a planted link",
		plant: func(t *testing.T, dir string) string {
			// postgres/ is the folder up chowns to PostgreSQL's user.
			if err := os.Symlink(t.TempDir(), filepath.Join(dir, "postgres")); err != nil {
				t.Fatal(err)
			}
			return dir
		},
		after: func(t *testing.T, dir string) {
			target, err := os.Readlink(filepath.Join(dir, "postgres"))
			if err != nil {
				t.Fatal(err)
			}
			var st syscall.Stat_t
			if err := syscall.Stat(target, &st); err != nil {
				t.Fatal(err)
			}
			if st.Uid != 0 {
				t.Errorf("the link's target %s now belongs to uid %d, not root: up chowned through the link", target, st.Uid)
			}
		},
		wantErr: "postgres is a symbolic link",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			cl := newCluster(t)
			top := cl.Dir
			cl.Dir = tc.plant(t, cl.Dir)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // the old script built first
			defer cancel()
			err := cl.Up(ctx, func(line string) { t.Log(line) })
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("up: %v; want it refused with %q", err, tc.wantErr)
			}
			if tc.after != nil {
				tc.after(t, top)
			}
		})
	}
}

// plantEnv plants a cluster.env of format, whose %s is the path of a file the planted
// command would make, dir/pwned (notRun checks it is not there).
func plantEnv(format string) func(t *testing.T, dir string) string {
	return func(t *testing.T, dir string) string {
		writeFile(t, filepath.Join(dir, "cluster.env"), fmt.Sprintf(format, filepath.Join(dir, "pwned")))
		return dir
	}
}

// notRun checks that the command planted in dir/cluster.env did not run, and removes the
// file while it is still the planted one, which the test's cleanup would take for a
// cluster's settings.
func notRun(t *testing.T, dir string) {
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Error("cluster.sh ran the command planted in cluster.env: it made the file pwned")
	}
	env := filepath.Join(dir, "cluster.env")
	if b, err := os.ReadFile(env); err == nil && bytes.Contains(b, []byte("pwned")) {
		if err := os.Remove(env); err != nil {
			t.Error(err)
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestClusterDatabaseRoles: no process shows PostgreSQL's passwords on its command line,
// which every local user reads in /proc, while the cluster comes up or runs; the server's
// role, temporal, is no superuser and cannot run a program on the host.
func TestClusterDatabaseRoles(t *testing.T) {
	cl := newCluster(t)
	scan := watchCommandLines(cl)
	cl.up(t)
	seen := scan()
	settings, err := cl.Settings()
	if err != nil {
		t.Fatal(err)
	}
	// need stops a subtest whose settings cluster.env lacks.
	need := func(t *testing.T, names ...string) {
		t.Helper()
		for _, name := range append(names, "PG_BIN", "PG_PORT") {
			if settings[name] == "" {
				t.Fatalf("cluster.env has no %s", name)
			}
		}
	}

	t.Run("no password on a command line", func(t *testing.T) {
		need(t, "POSTGRES_PWD")
		if seen.scans == 0 {
			t.Fatal("no scan of /proc saw the passwords")
		}
		t.Logf("%d scans of every process's command line, from cluster.env's first write to up's end", seen.scans)
		for _, name := range []string{"ADMIN_PWD", "POSTGRES_PWD"} {
			if cmd, ok := seen.found[settings[name]]; ok {
				t.Errorf("%s was on a command line: %s", name, cmd)
			}
		}
	})
	t.Run("temporal is no superuser", func(t *testing.T) {
		need(t, "ADMIN_USER", "ADMIN_PWD")
		q := "SELECT rolname || '=' || rolsuper FROM pg_roles WHERE rolname IN ('temporal', '" + settings["ADMIN_USER"] + "') ORDER BY 1"
		out, err := psql(settings, "ADMIN", q)
		want := "temporal=false\n" + settings["ADMIN_USER"] + "=true"
		if err != nil || out != want {
			t.Errorf("%s: %q, %v; want %q", q, out, err, want)
		}
		q = "SELECT datname || '=' || pg_get_userbyid(datdba) FROM pg_database WHERE datname LIKE 'temporal%' ORDER BY 1"
		out, err = psql(settings, "ADMIN", q)
		want = "temporal=temporal\ntemporal_visibility=temporal"
		if err != nil || out != want {
			t.Errorf("%s: %q, %v; want %q", q, out, err, want)
		}
	})
	t.Run("temporal runs no program", func(t *testing.T) {
		need(t, "POSTGRES_USER", "POSTGRES_PWD")
		out, err := psql(settings, "POSTGRES", "COPY (SELECT 1) TO PROGRAM 'cat >/dev/null'")
		if err == nil || !strings.Contains(out, "must be superuser or have privileges of the pg_execute_server_program role") {
			t.Errorf("COPY ... TO PROGRAM as temporal: %q, %v; want it refused for want of the privilege", out, err)
		}
	})
}

// psql runs query in the temporal database as the role of cluster.env's who_USER, with
// its password in PGPASSWORD, and returns its output (stderr included) trimmed.
func psql(settings map[string]string, who, query string) (string, error) {
	cmd := exec.Command(filepath.Join(settings["PG_BIN"], "psql"), "-h", "127.0.0.1", "-p", settings["PG_PORT"],
		"-U", settings[who+"_USER"], "-d", "temporal", "-XqAt", "-v", "ON_ERROR_STOP=1", "-c", query)
	cmd.Env = append(os.Environ(), "PGPASSWORD="+settings[who+"_PWD"])
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// commandLines is what watchCommandLines saw: how many times it read every process's
// command line with the passwords known, and each password it found, with the command.
type commandLines struct {
	scans int
	found map[string]string
}

// watchCommandLines reads every process's /proc/PID/cmdline over and over, as any local
// user may, looking for the passwords of cl's cluster.env (once it is there), until the
// function it returns is called; that function returns what it saw, after a last scan.
func watchCommandLines(cl *cluster) func() commandLines {
	seen := commandLines{found: map[string]string{}}
	var mu sync.Mutex
	stop := make(chan struct{})
	done := make(chan struct{})
	scan := func() {
		settings, err := cl.Settings()
		if err != nil {
			return // not written yet
		}
		var secrets [][]byte
		for _, name := range []string{"ADMIN_PWD", "POSTGRES_PWD"} {
			if settings[name] != "" {
				secrets = append(secrets, []byte(settings[name]))
			}
		}
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		mu.Lock()
		defer mu.Unlock()
		seen.scans++
		for _, p := range procs {
			b, err := os.ReadFile(p)
			if err != nil {
				continue // gone meanwhile
			}
			for _, s := range secrets {
				if bytes.Contains(b, s) {
					seen.found[string(s)] = fmt.Sprintf("%s: %s", p, bytes.ReplaceAll(bytes.ReplaceAll(b, s, []byte("<password>")), []byte{0}, []byte{' '}))
				}
			}
		}
	}
	go func() {
		defer close(done)
		// A tool with a password on its command line lives for tens of milliseconds.
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				scan()
			}
		}
	}()
	return func() commandLines {
		close(stop)
		<-done
		scan()
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

// TestClusterPIDFiles: a pid file names a number, which may have gone to another process
// (or been written to name one): restart and down signal only a process whose command
// line is the one cluster.sh started.
func TestClusterPIDFiles(t *testing.T) {
	cl := startCluster(t)
	// other is an unrelated process, as a pid file left by a service that died may name.
	other := exec.Command("sleep", "600")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = other.Process.Kill()
		_ = other.Wait()
	})
	plant := func(t *testing.T, service string) {
		t.Helper()
		cl.kill(t, service)
		writeFile(t, filepath.Join(cl.Dir, "run", service+".pid"), strconv.Itoa(other.Process.Pid)+"\n")
	}

	t.Run("restart", func(t *testing.T) {
		plant(t, "history")
		out, err := cl.run(context.Background(), t, "restart", "history")
		if err != nil {
			t.Fatalf("cluster.sh restart history: %v\n%s", err, out)
		}
		if !processRuns(other.Process.Pid) {
			t.Fatalf("restart history killed pid %d, the process its pid file named, which was not history's", other.Process.Pid)
		}
		if !strings.Contains(out, "left alone") {
			t.Errorf("restart did not say it left pid %d alone:\n%s", other.Process.Pid, out)
		}
		if pid, err := cl.PID("history"); err != nil || pid == other.Process.Pid || !processRuns(pid) {
			t.Errorf("history after the restart: pid %d, %v; want a new one that runs", pid, err)
		}
	})
	t.Run("down", func(t *testing.T) {
		plant(t, "matching")
		var pids []int
		for _, svc := range []string{"postgres", "frontend", "history", "worker"} {
			pid, err := cl.PID(svc)
			if err != nil {
				t.Fatal(err)
			}
			pids = append(pids, pid)
		}
		if out, err := cl.run(context.Background(), t, "down"); err != nil {
			t.Fatalf("cluster.sh down: %v\n%s", err, out)
		}
		if !processRuns(other.Process.Pid) {
			t.Fatalf("down killed pid %d, the process matching's pid file named", other.Process.Pid)
		}
		for _, pid := range pids {
			if processRuns(pid) {
				t.Errorf("pid %d, one of the cluster's, still runs after down", pid)
			}
		}
	})
}
