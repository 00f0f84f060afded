package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/todoflow/todoflow/api"
)

// measureIdle opens sessions sessions, each after one turn waiting for the
// user (their runs in the worker's cache, an idle timer each), and prints
// the worker's memory before and after.
func (e *env) measureIdle(ctx context.Context, sessions, lanes int, wake bool) error {
	model, err := writeScript(e.dir, "idle", idleScript())
	if err != nil {
		return err
	}
	before, err := e.w.stats(true)
	if err != nil {
		return err
	}
	rss0, err := rss(e.w.pid())
	if err != nil {
		return err
	}
	var (
		mu   sync.Mutex
		open []*session
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, lanes)
	)
	for range sessions {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			s, err := e.startSession(ctx, api.AgentInput{Model: model})
			if err == nil {
				err = s.turn(ctx, "hello")
			}
			mu.Lock()
			defer mu.Unlock()
			if s != nil {
				open = append(open, s)
			}
			if err != nil {
				errs = append(errs, err)
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		err = fmt.Errorf("%d of %d sessions failed; the first: %w", len(errs), sessions, errs[0])
	}
	defer func() {
		for _, s := range open {
			s.end(ctx)
		}
	}()
	if err != nil {
		return err
	}
	rss1, err := rss(e.w.pid())
	if err != nil {
		return err
	}
	after, err := e.w.stats(true)
	if err != nil {
		return err
	}
	rss2, err := rss(e.w.pid())
	if err != nil {
		return err
	}
	fmt.Fprintln(e.out, "\n| worker process | RSS | RSS after returning freed memory | Go heap in use | goroutines |\n|---|---|---|---|---|")
	fmt.Fprintf(e.out, "| started, no session | %s | | %s | %d |\n", mib(rss0), mib(int64(before.HeapInuse)), before.Routines)
	fmt.Fprintf(e.out, "| **%d idle sessions** (one turn each, waiting for the user) | **%s** | %s | %s | %d |\n", sessions, mib(rss1), mib(rss2),
		mib(int64(after.HeapInuse)), after.Routines)
	fmt.Fprintf(e.out, "\nPer session: %s of RSS, %s of heap.\n", kib((rss1-rss0)/int64(sessions)),
		kib((int64(after.HeapInuse)-int64(before.HeapInuse))/int64(sessions)))
	if !wake {
		return nil
	}
	return e.measureWake(ctx, open, lanes)
}

// measureWake restarts the worker, so that no session is in its cache, and
// sends every open session a message, lanes at a time: how long until all
// have answered, and each message's latency.
func (e *env) measureWake(ctx context.Context, open []*session, lanes int) error {
	if err := e.restartWorker(ctx, e.cfg); err != nil {
		return err
	}
	var (
		mu   sync.Mutex
		lat  []time.Duration
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, lanes)
	)
	start := time.Now()
	for _, s := range open {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			sent := time.Now()
			err := s.turn(ctx, "still there?")
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			lat = append(lat, time.Since(sent))
		})
	}
	wg.Wait()
	all := time.Since(start)
	if len(errs) > 0 {
		return fmt.Errorf("%d of %d sessions did not answer after the restart; the first: %w", len(errs), len(open), errs[0])
	}
	rss, err := rss(e.w.pid())
	if err != nil {
		return err
	}
	fmt.Fprintf(e.out, "\nAfter a worker restart (a fresh process, an empty cache), every session sent a message, %d at a time: all %d answered in %s (each: p50 %s, p99 %s); the worker's RSS then %s.\n",
		lanes, len(open), all.Round(time.Millisecond), ms(percentile(lat, 50)), ms(percentile(lat, 99)), mib(rss))
	return nil
}

func kib(b int64) string { return fmt.Sprintf("%.1f KiB", float64(b)/1024) }
