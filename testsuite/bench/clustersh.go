package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// A cluster of deploy/cluster.sh (PostgreSQL and temporal-server as four
// services), brought up for the cluster phase in a folder of its own and
// taken down after it.

// clusterServices are the temporal-server processes cluster.sh starts; their
// pids are in DIR/run/SERVICE.pid.
var clusterServices = []string{"frontend", "history", "matching", "worker"}

type clusterSh struct {
	script  string // deploy/cluster.sh
	dir     string
	address string // the frontend, host:port
}

// startClusterSh runs `deploy/cluster.sh up` in a fresh folder, its lines
// copied to progress (a cold build of the server takes minutes).
// cluster.sh's exit code 3 (PostgreSQL cannot be installed, no Go to build
// the server with) is said in one line; a cluster that failed to come up
// has stopped what it started and keeps its folder, for its logs. A driver
// killed before its close leaves nothing running: cluster.sh's watchdog
// takes the cluster down once this process is gone.
func startClusterSh(ctx context.Context, progress io.Writer) (*clusterSh, error) {
	root, err := gitOutput(ctx, "", "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("the cluster phase runs deploy/cluster.sh of the program's repository (run it from the worktree): %w", err)
	}
	dir, err := os.MkdirTemp("", "todoflow-bench-cluster-*")
	if err != nil {
		return nil, err
	}
	// Not 0700, as MkdirTemp makes it: run as root, PostgreSQL runs as a
	// user of its own, which must reach its folder.
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	cl := &clusterSh{script: filepath.Join(root, "deploy", "cluster.sh"), dir: dir}
	ctx, cancel := context.WithTimeout(ctx, 25*time.Minute) // a cold build included
	defer cancel()
	last, err := cl.run(ctx, progress, "up")
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode() == 3:
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("no cluster on this machine: %s", last)
	case err != nil:
		return nil, fmt.Errorf("deploy/cluster.sh up: %w: %s (its folder, with the logs: %s)", err, last, dir)
	}
	addr, ok := strings.CutPrefix(last, "TEMPORAL_ADDRESS=")
	if !ok {
		cl.close()
		return nil, fmt.Errorf("deploy/cluster.sh up's last line is %q; want TEMPORAL_ADDRESS=HOST:PORT", last)
	}
	cl.address = addr
	return cl, nil
}

// run runs cluster.sh COMMAND DIR, its output copied to progress, and
// returns its last line.
func (cl *clusterSh) run(ctx context.Context, progress io.Writer, command string) (string, error) {
	cmd := exec.CommandContext(ctx, cl.script, command, cl.dir)
	cmd.Env = append(os.Environ(), "TODOFLOW_CLUSTER_OWNER_PID="+strconv.Itoa(selfPID))
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	lastc := make(chan string, 1)
	go func() {
		var last string
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			fmt.Fprintln(progress, sc.Text())
			if t := strings.TrimSpace(sc.Text()); t != "" {
				last = t
			}
		}
		lastc <- last
	}()
	err := cmd.Run()
	pw.Close()
	return <-lastc, err
}

// close takes the cluster down and removes its folder; a cluster that did
// not stop keeps its folder, for its logs.
func (cl *clusterSh) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if last, err := cl.run(ctx, os.Stderr, "down"); err != nil {
		fmt.Fprintf(os.Stderr, "bench: deploy/cluster.sh down: %v: %s (its folder is kept: %s)\n", err, last, cl.dir)
		return
	}
	_ = os.RemoveAll(cl.dir)
}

// pids are the server's processes: the four services and PostgreSQL's
// postmaster (whose backends are its children: treeCPU).
func (cl *clusterSh) pids() ([]int, error) {
	files := []string{filepath.Join(cl.dir, "postgres", "data", "postmaster.pid")}
	for _, svc := range clusterServices {
		files = append(files, filepath.Join(cl.dir, "run", svc+".pid"))
	}
	var out []int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("the cluster's processes: %w", err)
		}
		first, _, _ := strings.Cut(string(b), "\n")
		pid, err := strconv.Atoi(strings.TrimSpace(first))
		if err != nil {
			return nil, fmt.Errorf("the cluster's processes: %s: %w", f, err)
		}
		out = append(out, pid)
	}
	return out, nil
}
