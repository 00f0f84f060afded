package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/todoflow/todoflow/api"
	tfclient "github.com/todoflow/todoflow/client"
)

// The first phase measures what a user who opens a session at a busy hour
// waits for: sessions started all at once, each sending its first message
// as soon as it is started, and the turns after it; beside a bare chat
// workflow of the same activities (two a turn, as the agent's write_todos
// and reply make), started and messaged the same way on the same worker
// process. Each worker configuration gets a fresh worker process.

// sdkDefaultPollers is the SDK's fixed number of pollers per queue, the
// worker's default.
const sdkDefaultPollers = 2

// bareChatSend is the bare chat's update: one message, answered once the
// turn's two activities ran.
const bareChatSend = "send"

// bareChatWorkflow answers each send with two no-op activities, and ends
// on the end signal: the cost of Temporal alone for a chat turn.
func bareChatWorkflow(ctx workflow.Context) error {
	err := workflow.SetUpdateHandler(ctx, bareChatSend, func(ctx workflow.Context, text string) (string, error) {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
		for range 2 {
			if err := workflow.ExecuteActivity(ctx, "noop").Get(ctx, nil); err != nil {
				return "", err
			}
		}
		return "ok: " + text, nil
	})
	if err != nil {
		return err
	}
	workflow.GetSignalChannel(ctx, api.EndSessionSignal).Receive(ctx, nil)
	return workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
}

// firstResult is one kind of session's latencies: the first reply's from
// the session's start, the later turns' from their message.
type firstResult struct {
	first, later []time.Duration
}

// measureFirst starts n agent sessions at once, then n bare ones, of turns
// turns each, and prints their latencies, for each worker configuration.
func (e *env) measureFirst(ctx context.Context, n, turns int, cfgs []workerConfig) error {
	model, err := writeScript(e.dir, "first", chatScript(turns))
	if err != nil {
		return err
	}
	fmt.Fprintf(e.out, "\n| worker | sessions | first reply p50 | first reply p99 | later turns p50 | later turns p99 | p99 of the first reply against the bare one's |\n|---|---|---|---|---|---|---|\n")
	for _, cfg := range cfgs {
		if err := e.restartWorker(ctx, cfg); err != nil {
			return err
		}
		agent, err := e.firstLoad(ctx, n, turns, func(ctx context.Context, id string) (func(context.Context, string) (string, error), func(), error) {
			s, err := tfclient.New(e.c, tfclient.Options{}).Start(ctx, api.AgentInput{Model: model}, tfclient.StartOptions{ID: id})
			if err != nil {
				return nil, nil, err
			}
			send := func(ctx context.Context, text string) (string, error) { return s.Send(ctx, text).Reply(ctx) }
			return send, func() { _ = s.End(context.WithoutCancel(ctx)) }, nil
		})
		if err != nil {
			return fmt.Errorf("%s: agent sessions: %w", cfg, err)
		}
		bare, err := e.firstLoad(ctx, n, turns, func(ctx context.Context, id string) (func(context.Context, string) (string, error), func(), error) {
			if _, err := e.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: baselineQueue}, "bareChat"); err != nil {
				return nil, nil, err
			}
			send := func(ctx context.Context, text string) (string, error) {
				h, err := e.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: bareChatSend, Args: []any{text}, WaitForStage: client.WorkflowUpdateStageCompleted})
				if err != nil {
					return "", err
				}
				var reply string
				return reply, h.Get(ctx, &reply)
			}
			return send, func() { _ = e.c.SignalWorkflow(context.WithoutCancel(ctx), id, "", api.EndSessionSignal, nil) }, nil
		})
		if err != nil {
			return fmt.Errorf("%s: bare sessions: %w", cfg, err)
		}
		for _, r := range []struct {
			name string
			res  firstResult
		}{{"agent, " + cfg.String(), agent}, {"bare chat workflow, SDK defaults", bare}} {
			fmt.Fprintf(e.out, "| %s | %d | %s | %s | %s | %s |", r.name, n, ms(percentile(r.res.first, 50)), ms(percentile(r.res.first, 99)),
				ms(percentile(r.res.later, 50)), ms(percentile(r.res.later, 99)))
			if r.name[0] == 'a' {
				fmt.Fprintf(e.out, " **%.2f** |\n", float64(percentile(agent.first, 99))/float64(percentile(bare.first, 99)))
			} else {
				fmt.Fprintln(e.out, " |")
			}
		}
	}
	return nil
}

// firstLoad starts n sessions at once with open, each sending its first
// message as soon as it is started, then turns-1 more.
func (e *env) firstLoad(ctx context.Context, n, turns int, open func(ctx context.Context, id string) (send func(context.Context, string) (string, error), end func(), err error)) (firstResult, error) {
	var (
		mu   sync.Mutex
		res  firstResult
		errs []error
		wg   sync.WaitGroup
	)
	gate := make(chan struct{})
	for range n {
		id := e.nextID("first")
		wg.Go(func() {
			<-gate
			ctx, cancel := context.WithTimeout(ctx, turnTimeout*time.Duration(turns))
			defer cancel()
			var lat []time.Duration
			err := func() error {
				start := time.Now()
				send, end, err := open(ctx, id)
				if err != nil {
					return err
				}
				defer end()
				for turn := 1; turn <= turns; turn++ {
					sent := time.Now()
					if turn == 1 {
						sent = start
					}
					if _, err := send(ctx, fmt.Sprintf("message %d", turn)); err != nil {
						return fmt.Errorf("turn %d: %w", turn, err)
					}
					lat = append(lat, time.Since(sent))
				}
				return nil
			}()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", id, err))
				return
			}
			res.first = append(res.first, lat[0])
			res.later = append(res.later, lat[1:]...)
		})
	}
	close(gate)
	wg.Wait()
	if len(errs) > 0 {
		return res, fmt.Errorf("%d of %d sessions failed; the first: %w", len(errs), n, errs[0])
	}
	return res, nil
}
