package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/client"

	"github.com/todoflow/todoflow/worker/devserver"
)

// env is what every phase works with: the server, a worker process, a
// client of the driver's own and the run script.
type env struct {
	srv   *devserver.Server
	c     client.Client
	w     *workerProc
	dir   string // scripts and the worker's state
	model string // the run script's model reference
	out   io.Writer
	cfg   workerConfig // the worker process's
	// shared, when set, is the folder under which each agent run gets a
	// shared workspace (see runInput).
	shared string
	seq    atomic.Int64
}

func (e *env) nextID(kind string) string { return fmt.Sprintf("bench-%s-%d", kind, e.seq.Add(1)) }

// agentRun plays the measured run to its end: the prompt's turn, then the
// session ends (end_session is sent with the start, so the run completes
// after its turn without waiting for a user).
func (e *env) agentRun(ctx context.Context) (string, error) {
	id := e.nextID("agent")
	run, err := e.c.SignalWithStartWorkflow(ctx, id, api.EndSessionSignal, nil,
		client.StartWorkflowOptions{ID: id, TaskQueue: api.TaskQueue, TypedSearchAttributes: api.StartSearchAttributes()}, api.WorkflowName, runInput(e.model, id, e.shared))
	if err != nil {
		return "", fmt.Errorf("start %s: %w", id, err)
	}
	var res api.AgentResult
	if err := run.Get(ctx, &res); err != nil {
		return "", fmt.Errorf("run %s: %w", id, err)
	}
	if res.ModelCalls != runModelCalls {
		return "", fmt.Errorf("run %s made %d model calls, want %d (reply %q)", id, res.ModelCalls, runModelCalls, res.Reply)
	}
	return id, nil
}

// baselineRun runs the bare workflow of as many no-op activities.
func (e *env) baselineRun(ctx context.Context) (string, error) {
	id := e.nextID("baseline")
	run, err := e.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: baselineQueue}, "baseline", runActivities)
	if err != nil {
		return "", fmt.Errorf("start %s: %w", id, err)
	}
	if err := run.Get(ctx, nil); err != nil {
		return "", fmt.Errorf("run %s: %w", id, err)
	}
	return id, nil
}

// cost is what a batch of runs took: wall time and the CPU time of each
// process.
type cost struct {
	runs                   int
	wall                   time.Duration
	server, worker, driver time.Duration
}

func (e *env) cpu() (server, worker, driver time.Duration, err error) {
	var errs [3]error
	server, errs[0] = cpuTime(e.srv.PID())
	worker, errs[1] = cpuTime(e.w.pid())
	driver, errs[2] = cpuTime(selfPID)
	return server, worker, driver, errors.Join(errs[:]...)
}

// span is when the driver called for a run and when it had its result.
type span struct{ called, done time.Time }

// batch runs lanes concurrent sequences of perLane runs each, and returns
// their cost and each run's span, by workflow id. Runs that took far
// longer than the others are reported (reportSlow), after the batch's cost
// is taken.
func (e *env) batch(ctx context.Context, lanes, perLane int, run func(context.Context) (string, error)) (cost, map[string]span, error) {
	s0, w0, d0, err := e.cpu()
	if err != nil {
		return cost{}, nil, err
	}
	start := time.Now()
	var (
		mu    sync.Mutex
		spans = map[string]span{}
		errs  []error
		wg    sync.WaitGroup
	)
	for range lanes {
		wg.Go(func() {
			for range perLane {
				began := time.Now()
				id, err := run(ctx)
				mu.Lock()
				spans[id] = span{began, time.Now()}
				if err != nil {
					errs = append(errs, err)
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return cost{}, nil, err
	}
	s1, w1, d1, err := e.cpu()
	if err != nil {
		return cost{}, nil, err
	}
	e.reportSlow(ctx, spans)
	return cost{runs: lanes * perLane, wall: wall, server: s1 - s0, worker: w1 - w0, driver: d1 - d0}, spans, nil
}

// ratioResult is the ratio phase's figure at one concurrency.
type ratioResult struct {
	conc            int
	agent, baseline []cost
	ratios          []float64
}

func (r ratioResult) ratio() float64 { return median(r.ratios) }

// perRun is the median of a figure per run over the samples.
func perRun(cs []cost, f func(cost) time.Duration) time.Duration {
	xs := make([]time.Duration, len(cs))
	for i, c := range cs {
		xs[i] = f(c) / time.Duration(c.runs)
	}
	return median(xs)
}

// sampleRuns is the fewest runs of each kind in a sample. With 10, one
// round of 20 runs made a sample, and the bare round alone took from 1.26
// to 2.2 s on this machine from one sample to the next (ratios 1.08 to
// 1.59); 60 runs, three rounds of 20, average that out.
const sampleRuns = 60

// measureRatio measures agent runs against baseline runs at conc
// concurrent runs, reps samples. A sample is at least sampleRuns runs of
// each, in rounds of conc runs: a round of agent runs, then one of bare
// runs (the other way round every other time), so that the machine's
// changing load falls on both alike.
func (e *env) measureRatio(ctx context.Context, conc, reps int) (ratioResult, error) {
	return e.measurePair(ctx, conc, reps, e.agentRun, e.baselineRun)
}

// measurePair is measureRatio of any two kinds of runs: a against b.
func (e *env) measurePair(ctx context.Context, conc, reps int, runA, runB func(context.Context) (string, error)) (ratioResult, error) {
	rounds := max(1, (sampleRuns+conc-1)/conc)
	res := ratioResult{conc: conc}
	turn := 0
	for rep := range reps {
		var a, b cost
		for range rounds {
			kinds := []bool{true, false}
			if turn++; turn%2 == 0 {
				kinds = []bool{false, true}
			}
			for _, agent := range kinds {
				run, sum := runB, &b
				if agent {
					run, sum = runA, &a
				}
				c, _, err := e.batch(ctx, conc, 1, run)
				if err != nil {
					return res, err
				}
				sum.add(c)
			}
		}
		res.agent, res.baseline = append(res.agent, a), append(res.baseline, b)
		res.ratios = append(res.ratios, float64(a.wall)/float64(b.wall))
		fmt.Fprintf(e.out, "  %d concurrent, sample %d: %s against %s, ratio %.2f (load %s)\n",
			conc, rep+1, a.wall.Round(time.Millisecond), b.wall.Round(time.Millisecond), float64(a.wall)/float64(b.wall), loadAverage())
	}
	return res, nil
}

func (c *cost) add(o cost) {
	c.runs += o.runs
	c.wall += o.wall
	c.server += o.server
	c.worker += o.worker
	c.driver += o.driver
}

// cpuRatio is the median over the samples of the CPU time the server and
// the worker spent per agent run over what they spent per bare run: what
// the ratio of wall times comes to when the machine is saturated, and a
// figure the machine's other load disturbs far less.
func (r ratioResult) cpuRatio() float64 {
	xs := make([]float64, len(r.agent))
	for i := range r.agent {
		a, b := r.agent[i], r.baseline[i]
		xs[i] = (float64(a.server+a.worker) / float64(a.runs)) / (float64(b.server+b.worker) / float64(b.runs))
	}
	return median(xs)
}

func printRatios(w io.Writer, rs []ratioResult) {
	fmt.Fprintln(w, "| concurrent runs | runs per sample | agent run (wall per sample) | baseline (wall per sample) | **ratio** | CPU ratio (server + worker) | per activity, agent / baseline | CPU per run: server, agent / baseline | CPU per run: worker, agent / baseline |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, r := range rs {
		a, b := r.agent, r.baseline
		wall := func(c cost) time.Duration { return c.wall }
		perAct := func(cs []cost) time.Duration { return perRun(cs, wall) * time.Duration(r.conc) / runActivities }
		fmt.Fprintf(w, "| %d | %d | %s | %s | **%.2f** | %.2f | %s / %s | %s / %s | %s / %s |\n",
			r.conc, a[0].runs, ms(median(durations(a, wall))), ms(median(durations(b, wall))), r.ratio(), r.cpuRatio(),
			ms(perAct(a)), ms(perAct(b)),
			ms(perRun(a, func(c cost) time.Duration { return c.server })), ms(perRun(b, func(c cost) time.Duration { return c.server })),
			ms(perRun(a, func(c cost) time.Duration { return c.worker })), ms(perRun(b, func(c cost) time.Duration { return c.worker })))
	}
}

func durations(cs []cost, f func(cost) time.Duration) []time.Duration {
	out := make([]time.Duration, len(cs))
	for i, c := range cs {
		out[i] = f(c)
	}
	return out
}
