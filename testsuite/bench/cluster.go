package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/todoflow/todoflow/api"

	"github.com/todoflow/todoflow/internal/localcluster"
	"github.com/todoflow/todoflow/worker/devserver"
)

// The cluster phase: the same load of chat sessions on the embedded dev
// server and on the production topology of deploy/cluster.sh, both up for
// the whole phase, samples alternating between them.

// clusterArgs are the cluster phase's flags.
type clusterArgs struct {
	sessions, turns, conc, reps int
}

// measureCluster brings a cluster up and a dev server, runs the load on
// each reps times, alternating, and prints the medians side by side. The
// -dc settings go to the dev server only; the cluster runs the
// configuration of deploy/temporal.
func measureCluster(ctx context.Context, dir string, dc []string, cfg workerConfig, a clusterArgs, out io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cl, err := startCluster(ctx, os.Stderr)
	if err != nil {
		return err
	}
	defer stopCluster(cl)
	var procs []serverProc
	for _, svc := range append([]string{"postgres"}, localcluster.Services...) {
		pid, err := cl.PID(svc)
		if err != nil {
			return err
		}
		procs = append(procs, serverProc{svc, pid})
	}
	srv, err := devserver.Start(ctx, devserver.Options{UIPort: -1, SearchAttributes: api.SearchAttributes(), DynamicConfig: dc, Progress: os.Stderr})
	if err != nil {
		return err
	}
	defer func() { _ = srv.Stop() }()

	dev := &target{name: "dev server", address: srv.Address(), namespace: srv.Namespace(),
		procs: []serverProc{{"temporal server start-dev", srv.PID()}}}
	clu := &target{name: "cluster", address: cl.Address, namespace: "default", procs: procs}
	targets := []*target{dev, clu}
	for _, t := range targets {
		if t.c, err = dialDriver(t.address, t.namespace); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		defer t.c.Close()
	}
	model, err := writeScript(dir, "cluster-chat", chatScript(a.turns))
	if err != nil {
		return err
	}
	l := load{sessions: a.sessions, turns: a.turns, conc: a.conc, model: model, dir: dir, cfg: cfg}

	fmt.Fprintf(out, "\n## Chat sessions on a cluster and on the dev server\n\n"+
		"%s sessions of %d turns (a `write_todos` and a reply each, scripted), %d sessions at a time, driven through package client (Start, Send, Reply, End, Wait) on two fresh worker processes with state folders of their own for every sample. "+
		"The cluster: deploy/cluster.sh (PostgreSQL, temporal-server %s as frontend, history with 4 shards, matching with 2 partitions, worker); the dev server as above. Both are up throughout; samples alternate, dev server first. Medians of %d samples.\n\n",
		thousands(int64(a.sessions)), a.turns, a.conc, devserver.MinServerVersion, a.reps)
	results := make([][]loadResult, len(targets))
	for rep := range a.reps {
		for i, t := range targets {
			r, err := runLoad(ctx, t, l, fmt.Sprintf("bench-load-%s-%d", strings.ReplaceAll(t.name, " ", ""), rep+1))
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "  %s, sample %d: %s\n", t.name, rep+1, r)
			reportSlowOf(ctx, out, t.c, "session", r.slowest)
			results[i] = append(results[i], r)
		}
	}
	fmt.Fprintln(out)
	printLoads(out, results[0], results[1])
	fmt.Fprintln(out)
	for i, t := range targets {
		var parts []string
		for j, p := range t.procs {
			perTurn := medianOf(results[i], func(r loadResult) float64 { return float64(r.serverCPUBy[j]) / float64(r.turns) })
			parts = append(parts, fmt.Sprintf("%s %s", p.name, ms(time.Duration(perTurn))))
		}
		fmt.Fprintf(out, "Server CPU per turn, %s: %s.\n", t.name, strings.Join(parts, ", "))
	}
	return nil
}

func (r loadResult) String() string {
	var byTurn []string
	for _, lat := range r.byTurn {
		byTurn = append(byTurn, ms(percentile(lat, 99)))
	}
	return fmt.Sprintf("%s turns in %.1f s (%.1f/s), latency p50 %s, p99 %s (turn by turn %s), max %s; workers' peak RSS %s / %s, workflow tasks %s / %s; load %s",
		thousands(int64(r.turns)), r.wall.Seconds(), r.perSecond(), ms(percentile(r.latency, 50)), ms(percentile(r.latency, 99)), strings.Join(byTurn, " / "),
		ms(percentile(r.latency, 100)), mib(r.peakRSS[0]), mib(r.peakRSS[1]), thousands(r.tasks[0]), thousands(r.tasks[1]), r.loadAvg)
}

// printLoads prints the medians of the dev server's samples and the
// cluster's side by side, with the ratio cluster / dev.
func printLoads(out io.Writer, dev, clu []loadResult) {
	type row struct {
		name  string
		value func([]loadResult) float64
		show  func(float64) string
	}
	perTurn := func(cpu func(loadResult) time.Duration) func([]loadResult) float64 {
		return func(rs []loadResult) float64 {
			return medianOf(rs, func(r loadResult) float64 { return float64(cpu(r)) / float64(r.turns) })
		}
	}
	dur := func(v float64) string { return ms(time.Duration(v)) }
	bytes := func(v float64) string { return mib(int64(v)) }
	rows := []row{
		{"**turns per second**", func(rs []loadResult) float64 { return medianOf(rs, loadResult.perSecond) }, func(v float64) string { return fmt.Sprintf("**%.1f**", v) }},
		{"**turn latency p50** (Send to its reply)", func(rs []loadResult) float64 {
			return medianOf(rs, func(r loadResult) float64 { return float64(percentile(r.latency, 50)) })
		}, dur},
		{"**turn latency p99**", func(rs []loadResult) float64 {
			return medianOf(rs, func(r loadResult) float64 { return float64(percentile(r.latency, 99)) })
		}, dur},
		{"turn latency p99, a session's first turns", func(rs []loadResult) float64 {
			return medianOf(rs, func(r loadResult) float64 { return float64(percentile(r.byTurn[0], 99)) })
		}, dur},
		{"turn latency p99, its later turns", func(rs []loadResult) float64 {
			return medianOf(rs, func(r loadResult) float64 { return float64(percentile(slices.Concat(r.byTurn[1:]...), 99)) })
		}, dur},
		{"**worker peak RSS** (VmHWM), the larger of the two", func(rs []loadResult) float64 {
			return medianOf(rs, func(r loadResult) float64 { return float64(max(r.peakRSS[0], r.peakRSS[1])) })
		}, bytes},
		{"worker peak RSS, the smaller", func(rs []loadResult) float64 {
			return medianOf(rs, func(r loadResult) float64 { return float64(min(r.peakRSS[0], r.peakRSS[1])) })
		}, bytes},
		{"workflow tasks per turn", func(rs []loadResult) float64 {
			return medianOf(rs, func(r loadResult) float64 { return float64(r.tasks[0]+r.tasks[1]) / float64(r.turns) })
		}, func(v float64) string { return fmt.Sprintf("%.2f", v) }},
		{"share of the workflow tasks on the busier worker", func(rs []loadResult) float64 {
			return medianOf(rs, func(r loadResult) float64 {
				return float64(max(r.tasks[0], r.tasks[1])) / float64(r.tasks[0]+r.tasks[1])
			})
		}, func(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) }},
		{"server CPU per turn (cluster: its 4 services and PostgreSQL)", perTurn(func(r loadResult) time.Duration { return r.serverCPU }), dur},
		{"workers' CPU per turn (both)", perTurn(func(r loadResult) time.Duration { return r.workerCPU }), dur},
	}
	fmt.Fprintln(out, "| | dev server | cluster | cluster / dev |")
	fmt.Fprintln(out, "|---|---|---|---|")
	for _, r := range rows {
		d, c := r.value(dev), r.value(clu)
		fmt.Fprintf(out, "| %s | %s | %s | %.2f |\n", r.name, r.show(d), r.show(c), c/d)
	}
}
