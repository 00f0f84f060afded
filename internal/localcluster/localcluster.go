// Package localcluster drives deploy/cluster.sh from Go: todoflow's
// production topology (PostgreSQL and temporal-server as four services) on
// this machine, for the end-to-end tests that run on it and the bench's
// cluster phase.
//
// Up brings a cluster up in a folder and reads its address from the
// script's last line; Run runs any other command of the script (down,
// restart); PID names a service's process. The script's exit code 3 (this
// machine cannot run a cluster: PostgreSQL cannot be installed, no Go to
// build the server with) is ErrUnavailable, with the script's reason.
//
// Every command runs with TODOFLOW_CLUSTER_OWNER_PID set to this process:
// a caller killed before it took the cluster down leaves nothing running,
// since cluster.sh's watchdog takes it down once this process is gone.
package localcluster

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
)

// ErrUnavailable says this machine cannot run a cluster (cluster.sh's exit
// code 3); the error that wraps it gives the script's reason.
var ErrUnavailable = errors.New("no cluster on this machine")

// Services are the temporal-server processes cluster.sh starts; "postgres"
// names PostgreSQL's postmaster too (PID).
var Services = []string{"frontend", "history", "matching", "worker"}

// Cluster is one brought up by cluster.sh in a folder of its own.
type Cluster struct {
	Script  string   // deploy/cluster.sh
	Dir     string   // its folder: cluster.env, logs/, run/, postgres/
	Env     []string // added to the script's environment
	Address string   // the frontend's host:port, once up
}

// New is a cluster of script to be brought up (Up) in a fresh folder
// under the system's temporary folder, 0700 as os.MkdirTemp makes it:
// cluster.sh refuses a folder another user could have written, and as root
// lets PostgreSQL's user search it, no more.
func New(script string) (*Cluster, error) {
	dir, err := os.MkdirTemp("", "todoflow-cluster-")
	if err != nil {
		return nil, err
	}
	return &Cluster{Script: script, Dir: dir}, nil
}

// Up runs `cluster.sh up` in c.Dir and sets c.Address from its last line,
// TEMPORAL_ADDRESS=HOST:PORT. Each line of output goes to progress (a cold
// build of the server takes minutes). A cluster that failed to come up has
// stopped what it started; its folder keeps the logs.
func (c *Cluster) Up(ctx context.Context, progress func(line string)) error {
	out, err := c.Run(ctx, progress, "up")
	last := LastLine(out)
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode() == 3:
		return fmt.Errorf("%w: %s", ErrUnavailable, last)
	case err != nil:
		return fmt.Errorf("cluster.sh up: %w: %s", err, last)
	}
	addr, ok := strings.CutPrefix(last, "TEMPORAL_ADDRESS=")
	if !ok {
		return fmt.Errorf("cluster.sh up's last line is %q; want TEMPORAL_ADDRESS=HOST:PORT", last)
	}
	c.Address = addr
	return nil
}

// Run runs `cluster.sh COMMAND DIR ARGS...`, each line of its output (stderr
// included) to progress as it comes, and returns the output.
func (c *Cluster) Run(ctx context.Context, progress func(line string), command string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, c.Script, append([]string{command, c.Dir}, args...)...)
	cmd.Env = append(os.Environ(), "TODOFLOW_CLUSTER_OWNER_PID="+strconv.Itoa(os.Getpid()))
	cmd.Env = append(cmd.Env, c.Env...)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	outc := make(chan string, 1)
	go func() {
		var out strings.Builder
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			progress(sc.Text())
			out.WriteString(sc.Text() + "\n")
		}
		_, _ = io.Copy(io.Discard, pr) // a line too long for the scanner
		outc <- out.String()
	}()
	err := cmd.Run()
	pw.Close()
	return <-outc, err
}

// PID is the process id of service (one of Services, or "postgres" for
// PostgreSQL's postmaster, whose backends are its children), from the file
// cluster.sh or PostgreSQL wrote.
func (c *Cluster) PID(service string) (int, error) {
	file := filepath.Join(c.Dir, "run", service+".pid")
	if service == "postgres" {
		file = filepath.Join(c.Dir, "postgres", "data", "postmaster.pid")
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, fmt.Errorf("the cluster's %s: %w", service, err)
	}
	first, _, _ := strings.Cut(string(b), "\n") // postmaster.pid: the pid, then more lines
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		return 0, fmt.Errorf("the cluster's %s: %s: %w", service, file, err)
	}
	return pid, nil
}

// Settings are the cluster's settings, from the NAME=VALUE lines cluster.sh
// wrote to cluster.env: its ports, PostgreSQL's binaries, roles and their
// passwords (ADMIN_USER, ADMIN_PWD; POSTGRES_USER, POSTGRES_PWD).
func (c *Cluster) Settings() (map[string]string, error) {
	file := filepath.Join(c.Dir, "cluster.env")
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("the cluster's settings: %w", err)
	}
	settings := map[string]string{}
	for i, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("the cluster's settings: %s, line %d: not NAME=VALUE", file, i+1)
		}
		settings[name] = value
	}
	return settings, nil
}

// LastLine is the last line of out that is not blank.
func LastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
