package main

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/todoflow/todoflow/api"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/todoflow/todoflow/workflows"
)

// noContinueAsNew makes a server keep a session in one run however long
// it gets, so that one history holds all its turns (the default suggests
// continue-as-new at 4,096 events or 4 MiB).
var noContinueAsNew = []string{
	"limit.historyCount.suggestContinueAsNew=1000000",
	"limit.historySize.suggestContinueAsNew=1000000000",
}

// measureReplay records a session of turns turns in one run and times the
// replay of its history, the work a worker does to rebuild the session
// after it left the cache (a restart, another worker). The history is
// written to save when it is not "".
func (e *env) measureReplay(ctx context.Context, turns, reps int, save, profile string) error {
	model, err := writeScript(e.dir, "replay", chatScript(turns))
	if err != nil {
		return err
	}
	// A budget no session of this length reaches: the history holds the
	// turns and nothing else (no compaction's summary calls).
	in := api.AgentInput{Model: model}
	in.Context.MaxTokens = 100_000_000
	s, err := e.startSession(ctx, in)
	if err != nil {
		return err
	}
	start := time.Now()
	for turn := 1; turn <= turns; turn++ {
		if err := s.turn(ctx, fmt.Sprintf("message %d", turn)); err != nil {
			return err
		}
	}
	played := time.Since(start)
	evs, runs, err := e.chain(ctx, s.id, s.run)
	if err != nil {
		return err
	}
	s.end(ctx)
	if runs != 1 {
		return fmt.Errorf("the session of %d turns continued as new (%d runs); the replay needs one history", turns, runs)
	}
	hist := &historypb.History{Events: evs}
	if save != "" {
		b, err := protojson.Marshal(hist)
		if err != nil {
			return err
		}
		if err := os.WriteFile(save, b, 0o644); err != nil {
			return err
		}
	}
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var times []time.Duration
	for range reps {
		d, err := replay(hist, workflow.Execution{ID: s.id, RunID: s.run})
		if err != nil {
			return fmt.Errorf("replay the %d-turn history: %w", turns, err)
		}
		times = append(times, d)
	}
	fmt.Fprintf(e.out, "\n| history | events | bytes | played in | replay (median of %d) |\n|---|---|---|---|---|\n", reps)
	fmt.Fprintf(e.out, "| a session of %d turns, one run | %s | %s | %s | **%s** |\n", turns, thousands(int64(len(evs))),
		thousands(int64(proto.Size(hist))), played.Round(time.Second), ms(median(times)))
	if save != "" {
		fmt.Fprintf(e.out, "\nThe history is in %s.\n", save)
	}
	return nil
}

// replay replays hist with a fresh replayer and times it. The replayer
// writes the run's search-attribute upserts into the start event it is
// given (the workflow's info shares that event's map), so each replay gets
// a copy: a second replay of the same events would start with the first's
// final attributes, and a run that reads what it was started with
// (agent.publish) would take another path and fail as nondeterministic.
func replay(hist *historypb.History, exec workflow.Execution) (time.Duration, error) {
	h := proto.Clone(hist).(*historypb.History)
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(workflows.AgentWorkflow, workflow.RegisterOptions{Name: api.WorkflowName})
	start := time.Now()
	err := r.ReplayWorkflowHistoryWithOptions(nil, h, worker.ReplayWorkflowHistoryOptions{OriginalExecution: exec})
	return time.Since(start), err
}
