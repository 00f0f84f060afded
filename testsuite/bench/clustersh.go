package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/todoflow/todoflow/internal/localcluster"
)

// startCluster brings up a cluster of this repository's deploy/cluster.sh
// (package localcluster) in a fresh folder, its lines copied to progress.
// A cluster that failed to come up has stopped what it started and keeps
// its folder, for its logs.
func startCluster(ctx context.Context, progress io.Writer) (*localcluster.Cluster, error) {
	script, err := clusterScript()
	if err != nil {
		return nil, err
	}
	cl, err := localcluster.New(script)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 25*time.Minute) // a cold build of the server included
	defer cancel()
	if err := cl.Up(ctx, lineTo(progress)); err != nil {
		return nil, fmt.Errorf("%w (its folder: %s)", err, cl.Dir)
	}
	return cl, nil
}

// clusterScript finds deploy/cluster.sh in the working directory or a
// folder above it: the bench runs from the repository's root (go run
// ./testsuite/bench), its test from testsuite/bench, in a checkout or in a
// copy without git.
func clusterScript() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("the cluster phase: %w", err)
	}
	for {
		p := filepath.Join(dir, "deploy", "cluster.sh")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("the cluster phase runs deploy/cluster.sh of this repository: none in the working directory or above it (run the bench from the repository)")
		}
		dir = up
	}
}

// stopCluster takes cl down and removes its folder; a cluster that did not
// stop keeps its folder, for its logs.
func stopCluster(cl *localcluster.Cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := cl.Run(ctx, lineTo(os.Stderr), "down"); err != nil {
		fmt.Fprintf(os.Stderr, "bench: deploy/cluster.sh down: %v: %s (its folder is kept: %s)\n", err, localcluster.LastLine(out), cl.Dir)
		return
	}
	_ = os.RemoveAll(cl.Dir)
}

func lineTo(w io.Writer) func(string) {
	return func(line string) { fmt.Fprintln(w, line) }
}
