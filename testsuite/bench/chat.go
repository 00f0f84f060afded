package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/todoflow/todoflow/api"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"
)

// chain returns every event of a workflow id's runs from firstRun on,
// following continue-as-new, oldest first, and how many runs there were.
func (e *env) chain(ctx context.Context, id, firstRun string) ([]*historypb.HistoryEvent, int, error) {
	var all []*historypb.HistoryEvent
	runs := 0
	for run := firstRun; run != ""; {
		runs++
		it := e.c.GetWorkflowHistory(ctx, id, run, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		next := ""
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				return nil, 0, fmt.Errorf("history of %s run %s: %w", id, run, err)
			}
			all = append(all, ev)
			if can := ev.GetWorkflowExecutionContinuedAsNewEventAttributes(); can != nil {
				next = can.GetNewExecutionRunId()
			}
		}
		run = next
	}
	return all, runs, nil
}

// session is a chat session driven turn by turn with send_message.
type session struct {
	e        *env
	id, run  string
	turnTime []time.Duration
}

func (e *env) startSession(ctx context.Context, in api.AgentInput) (*session, error) {
	id := e.nextID("chat")
	run, err := e.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: api.TaskQueue, TypedSearchAttributes: api.StartSearchAttributes()}, api.WorkflowName, in)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", id, err)
	}
	return &session{e: e, id: id, run: run.GetRunID()}, nil
}

// turn sends one message and waits for its reply.
func (s *session) turn(ctx context.Context, text string) error {
	start := time.Now()
	h, err := s.e.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: s.id, UpdateName: api.SendMessageUpdate,
		Args: []any{text}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		return fmt.Errorf("%s: send_message: %w", s.id, err)
	}
	var reply string
	if err := h.Get(ctx, &reply); err != nil {
		return fmt.Errorf("%s: send_message: %w", s.id, err)
	}
	s.turnTime = append(s.turnTime, time.Since(start))
	return nil
}

func (s *session) end(ctx context.Context) {
	_ = s.e.c.SignalWorkflow(ctx, s.id, "", api.EndSessionSignal, nil)
}

// measureChat drives a session of turns turns and prints the history each
// marked turn added, continue-as-new included.
func (e *env) measureChat(ctx context.Context, turns int) error {
	model, err := writeScript(e.dir, "chat", chatScript(turns))
	if err != nil {
		return err
	}
	s, err := e.startSession(ctx, api.AgentInput{Model: model})
	if err != nil {
		return err
	}
	defer s.end(ctx)
	var marks []int
	for _, m := range []int{10, 100, 500, 1000} {
		if m <= turns {
			marks = append(marks, m)
		}
	}
	type mark struct {
		events, bytes, runs int
		types               map[string]int
	}
	at := map[int]mark{}
	for turn := 1; turn <= turns; turn++ {
		if err := s.turn(ctx, fmt.Sprintf("message %d", turn)); err != nil {
			return err
		}
		if slices.Contains(marks, turn) || slices.Contains(marks, turn+1) {
			evs, runs, err := e.chain(ctx, s.id, s.run)
			if err != nil {
				return err
			}
			m := mark{events: len(evs), runs: runs, types: map[string]int{}}
			for _, ev := range evs {
				m.bytes += proto.Size(ev)
				m.types[strings.TrimPrefix(ev.GetEventType().String(), "EVENT_TYPE_")]++
			}
			at[turn] = m
		}
	}
	w := e.out
	fmt.Fprintln(w, "\n| chat turn (a `write_todos` and a reply) | events this turn | bytes this turn | history so far | turn time (median of the 10 turns before) |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, t := range marks {
		m, prev := at[t], at[t-1]
		fmt.Fprintf(w, "| %d | %d | %s | %s events, %s bytes (%d runs) | %s |\n", t, m.events-prev.events, thousands(int64(m.bytes-prev.bytes)),
			thousands(int64(m.events)), thousands(int64(m.bytes)), m.runs, ms(median(s.turnTime[max(0, t-10):t])))
	}
	if len(marks) > 0 {
		t := marks[0]
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(at[t].types)) {
			if d := at[t].types[k] - at[t-1].types[k]; d != 0 {
				parts = append(parts, fmt.Sprintf("%d %s", d, k))
			}
		}
		sort.Strings(parts)
		fmt.Fprintf(w, "\nThe events of turn %d: %s.\n", t, strings.Join(parts, ", "))
		last := marks[len(marks)-1]
		fmt.Fprintf(w, "Bytes of turn %d over turn %d: %.2f.\n", last, t,
			float64(at[last].bytes-at[last-1].bytes)/float64(at[t].bytes-at[t-1].bytes))
	}
	return nil
}
