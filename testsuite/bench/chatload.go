package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/client"

	tfclient "github.com/todoflow/todoflow/client"
)

// A load of chat sessions, driven through package client as a program that
// embeds todoflow drives them (Start, Send, Reply, End, Wait), on two worker
// processes with state folders of their own: what the cluster phase runs
// against each server.

// target is a server the load runs against.
type target struct {
	name      string
	address   string
	namespace string
	c         client.Client // the driver's
	procs     []serverProc  // the server's processes
}

// serverProc is one of a server's processes, whose CPU time is read with
// its children's (treeCPU).
type serverProc struct {
	name string
	pid  int
}

// load is what runLoad runs: sessions sessions of turns turns each (the
// model answering as model says), conc of them at a time.
type load struct {
	sessions, turns, conc int
	model                 string
	dir                   string // the workers' state folders go here
	cfg                   workerConfig
}

// workflowTasksRPC is the call by which a worker completes a workflow task:
// how the sessions' work fell between the two workers.
const workflowTasksRPC = "RespondWorkflowTaskCompleted"

// loadResult is one sample of a load on one server.
type loadResult struct {
	turns   int
	wall    time.Duration     // the first start to the last reply
	latency []time.Duration   // each turn's, from its Send to its reply
	byTurn  [][]time.Duration // the same, by turn: [0] the first turns
	// slowest is each session's slowest turn, by id, for reportSlowOf.
	slowest map[string]time.Duration
	peakRSS [2]int64 // each worker process's (VmHWM)
	tasks   [2]int64 // the workflow tasks each worker completed
	// CPU time of the server's processes and of the two workers.
	serverCPU, workerCPU time.Duration
	serverCPUBy          []time.Duration // by process, as target.procs
	loadAvg              string          // the machine's, at the sample's end
}

func (r loadResult) perSecond() float64 { return float64(r.turns) / r.wall.Seconds() }

// warmSessions are played through on fresh workers before a sample is
// timed: the first sessions pay for connections and caches.
const warmSessions = 10

// turnTimeout bounds the wait for one reply, and sampleTimeout a sample:
// a session that never answers fails the sample instead of hanging it.
const (
	turnTimeout   = 5 * time.Minute
	sampleTimeout = 60 * time.Minute
)

// runLoad starts two fresh worker processes on t, plays l through them
// (after warmSessions untimed), stops them and returns the sample. Session
// ids start with prefix.
func runLoad(ctx context.Context, t *target, l load, prefix string) (res loadResult, err error) {
	ctx, cancel := context.WithTimeout(ctx, sampleTimeout)
	defer cancel()
	var workers []*workerProc
	defer func() {
		for _, w := range workers {
			if serr := w.stop(); serr != nil && err == nil {
				err = serr
			}
		}
	}()
	for range 2 {
		state, err := os.MkdirTemp(l.dir, "worker-*")
		if err != nil {
			return res, err
		}
		w, err := startWorker(ctx, "", t.address, t.namespace, state, l.cfg)
		if err != nil {
			return res, err
		}
		workers = append(workers, w)
	}
	tc := tfclient.New(t.c, tfclient.Options{Namespace: t.namespace})
	warm := l
	warm.sessions, warm.conc = warmSessions, min(l.conc, warmSessions)
	if _, err := playSessions(ctx, tc, warm, prefix+"-warm"); err != nil {
		return res, fmt.Errorf("%s, warming up: %w", t.name, err)
	}

	before := make([]workerStats, len(workers))
	cpu0, err := loadCPU(t, workers)
	if err != nil {
		return res, err
	}
	for i, w := range workers {
		if before[i], err = w.stats(false); err != nil {
			return res, err
		}
	}
	if res, err = playSessions(ctx, tc, l, prefix); err != nil {
		return res, fmt.Errorf("%s: %w", t.name, err)
	}
	cpu1, err := loadCPU(t, workers)
	if err != nil {
		return res, err
	}
	res.workerCPU = cpu1.workers - cpu0.workers
	for i := range cpu1.server {
		d := cpu1.server[i] - cpu0.server[i]
		res.serverCPUBy = append(res.serverCPUBy, d)
		res.serverCPU += d
	}
	for i, w := range workers {
		after, err := w.stats(false)
		if err != nil {
			return res, err
		}
		res.tasks[i] = after.RPC[workflowTasksRPC].Calls - before[i].RPC[workflowTasksRPC].Calls
		if res.peakRSS[i], err = peakRSS(w.pid()); err != nil {
			return res, err
		}
	}
	res.loadAvg = loadAverage()
	return res, nil
}

// cpuSoFar is the CPU time the server's processes (as target.procs) and
// the workers have used so far.
type cpuSoFar struct {
	server  []time.Duration
	workers time.Duration
}

func loadCPU(t *target, workers []*workerProc) (cpuSoFar, error) {
	var out cpuSoFar
	for _, p := range t.procs {
		c, err := treeCPU(p.pid)
		if err != nil {
			return out, fmt.Errorf("%s's %s: %w", t.name, p.name, err)
		}
		out.server = append(out.server, c)
	}
	for _, w := range workers {
		c, err := cpuTime(w.pid())
		if err != nil {
			return out, err
		}
		out.workers += c
	}
	return out, nil
}

// playSessions plays l's sessions, l.conc at a time: each is started, sent
// its turns one after the other (each reply checked against the script),
// then ended and waited for. It returns the turns' latencies and the time
// from the first start to the last reply. A session that fails does not
// stop the others; the error counts them.
func playSessions(ctx context.Context, tc *tfclient.Client, l load, prefix string) (loadResult, error) {
	res := loadResult{byTurn: make([][]time.Duration, l.turns), slowest: map[string]time.Duration{}}
	var (
		mu        sync.Mutex
		lastReply time.Time
		errs      []error
		next      atomic.Int64
		wg        sync.WaitGroup
	)
	start := time.Now()
	for range min(l.conc, l.sessions) {
		wg.Go(func() {
			for {
				n := int(next.Add(1))
				if n > l.sessions {
					return
				}
				id := fmt.Sprintf("%s-%d", prefix, n)
				lat, last, err := playSession(ctx, tc, l, id)
				mu.Lock()
				res.latency = append(res.latency, lat...)
				for i, d := range lat {
					res.byTurn[i] = append(res.byTurn[i], d)
				}
				if len(lat) > 0 {
					res.slowest[id] = slices.Max(lat)
				}
				if last.After(lastReply) {
					lastReply = last
				}
				if err != nil {
					errs = append(errs, err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return res, fmt.Errorf("%d of %d sessions failed; the first: %w", len(errs), l.sessions, errs[0])
	}
	res.turns, res.wall = len(res.latency), lastReply.Sub(start)
	return res, nil
}

// playSession plays one session and returns its turns' latencies and when
// its last reply came.
func playSession(ctx context.Context, tc *tfclient.Client, l load, id string) (lat []time.Duration, last time.Time, err error) {
	s, err := tc.Start(ctx, api.AgentInput{Model: l.model}, tfclient.StartOptions{ID: id})
	if err != nil {
		return nil, last, err
	}
	for turn := 1; turn <= l.turns; turn++ {
		tctx, cancel := context.WithTimeout(ctx, turnTimeout)
		sent := time.Now()
		reply, err := s.Send(tctx, fmt.Sprintf("message %d", turn)).Reply(tctx)
		last = time.Now()
		cancel()
		if err != nil {
			return lat, last, fmt.Errorf("%s, turn %d: %w", id, turn, err)
		}
		if want := chatReply(turn); reply != want {
			return lat, last, fmt.Errorf("%s, turn %d: reply %q, want %q", id, turn, reply, want)
		}
		lat = append(lat, last.Sub(sent))
	}
	if err := s.End(ctx); err != nil {
		return lat, last, err
	}
	if _, err := s.Wait(ctx); err != nil {
		return lat, last, fmt.Errorf("%s: %w", id, err)
	}
	return lat, last, nil
}
