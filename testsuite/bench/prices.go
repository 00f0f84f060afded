package main

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/client"
)

// The prices phase: what each ingredient of a model call costs on its own,
// as the bare workflow with that ingredient added to each of its steps,
// measured against the bare workflow in the same run. It says what the
// levers can win: a query or a heartbeat per step is priced here whatever
// the agent's code does.

// pricedRun runs the priced workflow of p.
func (e *env) pricedRun(p priced) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		id := e.nextID("priced")
		run, err := e.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: baselineQueue}, "priced", p)
		if err != nil {
			return "", fmt.Errorf("start %s: %w", id, err)
		}
		if err := run.Get(ctx, nil); err != nil {
			return "", fmt.Errorf("run %s: %w", id, err)
		}
		return id, nil
	}
}

func (e *env) measurePrices(ctx context.Context, reps int, concs []int) error {
	prices := []struct {
		name string
		p    priced
	}{
		{"nothing more (the bare workflow, as a workflow of its own)", priced{}},
		{"1 KiB more input per activity", priced{InputBytes: 1 << 10}},
		{"4 KiB more input per activity", priced{InputBytes: 4 << 10}},
		{"a search attribute upserted before each activity", priced{Upsert: true}},
		{"a heartbeat at the start of each activity", priced{Heartbeat: true}},
		{"a query of the workflow by each activity", priced{Query: true}},
	}
	fmt.Fprintf(e.out, "\n## What each ingredient of a step costs\n\nThe bare workflow of %d steps with one thing added to every step, against the bare workflow; medians of %d samples.\n\n", runActivities, reps)
	fmt.Fprint(e.out, "| added to every step |")
	for _, c := range concs {
		fmt.Fprintf(e.out, " ratio, %d at once | CPU ratio, %d at once |", c, c)
	}
	fmt.Fprint(e.out, "\n|---|")
	for range concs {
		fmt.Fprint(e.out, "---|---|")
	}
	fmt.Fprintln(e.out)
	for _, pr := range prices {
		pr.p.N = runActivities
		row := "| " + pr.name + " |"
		for _, c := range concs {
			r, err := e.measurePair(ctx, c, reps, e.pricedRun(pr.p), e.baselineRun)
			if err != nil {
				return err
			}
			row += fmt.Sprintf(" %.2f | %.2f |", r.ratio(), r.cpuRatio())
		}
		fmt.Fprintln(e.out, row)
	}
	return nil
}
