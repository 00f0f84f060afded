package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"
)

// levers are the worker settings compared by the levers phase, each in a
// fresh worker process on the same server, against the baseline in that
// process (which gets the same settings).
var levers = []workerConfig{
	{},
	{NoCache: true},
	{NoEager: true},
	{Gzip: true},
	{WorkflowPollers: 4, ActivityPollers: 4},
}

// lever is one worker of the levers phase: settings, or the program of an
// earlier revision.
type lever struct {
	name   string
	exe    string
	cfg    workerConfig
	shared bool // the runs' workspaces are shared: tools on the workflow's queue
}

// measureLevers measures the ratio at each concurrency for each lever and
// for the worker of each earlier revision, then restores the worker the
// run started with. The levers take turns sample by sample (a fresh worker
// process each time), so that the machine's changing load falls on all of
// them alike.
//
// With onlyRevs, the levers are the worker defaults and the revisions.
func (e *env) measureLevers(ctx context.Context, reps int, concs []int, revs []revision, onlyRevs bool) error {
	start := e.cfg
	var all []lever
	for _, cfg := range levers {
		all = append(all, lever{name: cfg.String(), cfg: cfg})
	}
	all = append(all, lever{name: "worker defaults, runs with a shared workspace (tools not pinned to a host queue)", shared: true})
	if onlyRevs {
		all = all[:1]
	}
	for _, r := range revs {
		all = append(all, lever{name: fmt.Sprintf("the worker of %s (%s)", r.name, r.rev), exe: r.bin})
	}
	results := make([][]ratioResult, len(all)) // by lever, by concurrency
	for i := range all {
		results[i] = make([]ratioResult, len(concs))
		for j, c := range concs {
			results[i][j].conc = c
		}
	}
	for rep := range reps {
		for i, l := range all {
			if err := e.restartWorkerOf(ctx, l.exe, l.cfg); err != nil {
				return err
			}
			e.shared = ""
			if l.shared {
				e.shared = filepath.Join(e.dir, "shared")
			}
			// Warm the fresh worker up.
			if _, err := e.agentRun(ctx); err != nil {
				return err
			}
			if _, err := e.baselineRun(ctx); err != nil {
				return err
			}
			for j, c := range concs {
				fmt.Fprintf(e.out, "  %s, sample %d:\n", l.name, rep+1)
				r, err := e.measureRatio(ctx, c, 1)
				if err != nil {
					return err
				}
				acc := &results[i][j]
				acc.agent = append(acc.agent, r.agent...)
				acc.baseline = append(acc.baseline, r.baseline...)
				acc.ratios = append(acc.ratios, r.ratios...)
			}
		}
	}
	fmt.Fprintf(e.out, "\n## Worker settings and earlier revisions\n\nEach in a fresh worker process on this server, taking turns sample by sample; the bare runs get the same settings, in the same process. Medians of %d samples.\n\n", reps)
	head, rule := "| worker |", "|---|"
	for _, c := range concs {
		head += fmt.Sprintf(" ratio, %d at once | CPU ratio | per activity, agent / bare | CPU per run (server + worker), agent / bare |", c)
		rule += "---|---|---|---|"
	}
	fmt.Fprintln(e.out, head)
	fmt.Fprintln(e.out, rule)
	for i, l := range all {
		row := fmt.Sprintf("| %s |", l.name)
		for j, c := range concs {
			r := results[i][j]
			wall := func(c cost) time.Duration { return c.wall }
			perAct := func(cs []cost) time.Duration { return perRun(cs, wall) * time.Duration(c) / runActivities }
			cpu := func(c cost) time.Duration { return c.server + c.worker }
			row += fmt.Sprintf(" **%.2f** | %.2f | %s / %s | %s / %s |", r.ratio(), r.cpuRatio(), ms(perAct(r.agent)), ms(perAct(r.baseline)),
				ms(perRun(r.agent, cpu)), ms(perRun(r.baseline, cpu)))
		}
		fmt.Fprintln(e.out, row)
	}
	e.shared = ""
	return e.restartWorker(ctx, start)
}
