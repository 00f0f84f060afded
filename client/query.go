package client

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/todoflow/todoflow/api"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/todoflow/todoflow/internal/patient"
	"github.com/todoflow/todoflow/model"
)

// Reading a session: the queries (a worker answers them, from the run's
// state) and the history (the server answers it alone).

// State is the state query's answer: the list, the plan, the waits, the
// subagents, the model's errors (package api); a model call that the
// server retries now is its model_error (modelerror.go).
func (s *Session) State(ctx context.Context) (api.State, error) {
	st, err := s.RunState(ctx)
	if err != nil {
		return st, err
	}
	if st.Status == api.StatusRunning {
		if me := s.retriedModelCall(ctx); me != nil {
			st.ModelError = me
		}
	}
	return st, nil
}

// RunState is the state query's answer alone, what the run knows: one
// request, for a caller that polls often and does not show model_error
// (State also asks the server about the model call it retries).
func (s *Session) RunState(ctx context.Context) (api.State, error) {
	var st api.State
	err := s.query(ctx, &st, api.StateQuery)
	return st, err
}

// RawState is the state query's answer as the workflow wrote it (`starter
// state --json`, the "state" of `starter run --json`), but for a model
// call that the server retries now, which is its model_error, as in State.
func (s *Session) RawState(ctx context.Context) (json.RawMessage, error) {
	var raw json.RawMessage
	if err := s.query(ctx, &raw, api.StateQuery); err != nil {
		return nil, err
	}
	return s.withRetried(ctx, raw)
}

// Plan is the plan checklist, as the `plan` command shows it.
func (s *Session) Plan(ctx context.Context) (string, error) {
	var text string
	err := s.query(ctx, &text, api.PlanQuery)
	return text, err
}

// Messages reads the transcript from message from on, one page: at most
// limit messages (the workflow may answer fewer, bounding each answer in
// bytes); an empty page is the end.
func (s *Session) Messages(ctx context.Context, from, limit int) ([]model.Message, error) {
	var page []model.Message
	err := s.query(ctx, &page, api.MessagesQuery, from, limit)
	return page, err
}

// messagesPage is how many messages one messages query asks for.
const messagesPage = 200

// messagesFrom reads the transcript from message from to its end.
func (s *Session) messagesFrom(ctx context.Context, from int) ([]model.Message, error) {
	return pages(from, func(from int) ([]model.Message, error) { return s.Messages(ctx, from, messagesPage) })
}

// pages reads a transcript from message from to its end with read, one page
// at a time: a short page is not the end, only an empty one is. On an error
// it returns what it read before.
func pages[T any](from int, read func(from int) ([]T, error)) ([]T, error) {
	all := []T{}
	for {
		page, err := read(from + len(all))
		if err != nil || len(page) == 0 {
			return all, err
		}
		all = append(all, page...)
	}
}

func (s *Session) query(ctx context.Context, out any, name string, args ...any) error {
	v, err := s.c.tc.QueryWorkflow(ctx, s.id, "", name, args...)
	return s.decode(v, err, out, name)
}

func (s *Session) decode(v converter.EncodedValue, err error, out any, name string) error {
	if err != nil {
		return s.wrap("query "+name+" of", err)
	}
	if err := v.Get(out); err != nil {
		return fmt.Errorf("decode %s of %s: %w", name, s.id, err)
	}
	return nil
}

// Record is a session's state and whole transcript, JSON as the queries
// answer them: `starter run --json`'s "state" and "messages".
type Record struct {
	State    json.RawMessage
	Messages []json.RawMessage
}

// Record reads the state and the whole transcript, page by page. An answer
// that is late (no worker answered in time, a server restarting) is asked
// for again until ctx ends: for a session that has ended, whose answers do
// not change, read whenever a worker serves it.
func (s *Session) Record(ctx context.Context) (Record, error) {
	var rec Record
	v, err := patient.Query(ctx, s.c.tc, s.id, "", api.StateQuery)
	if err := s.decode(v, err, &rec.State, api.StateQuery); err != nil {
		return rec, err
	}
	rec.Messages, err = pages(0, func(from int) ([]json.RawMessage, error) {
		v, err := patient.Query(ctx, s.c.tc, s.id, "", api.MessagesQuery, from, messagesPage)
		var page []json.RawMessage
		if err := s.decode(v, err, &page, api.MessagesQuery); err != nil {
			return nil, fmt.Errorf("from message %d: %w", from, err)
		}
		return page, nil
	})
	return rec, err
}

// History is the history of the session's run runID ("" for the latest)
// as the JSON that `temporal workflow show --output json` prints and the
// SDK's replayer reads, and its number of events.
func (s *Session) History(ctx context.Context, runID string) ([]byte, int, error) {
	events, err := s.events(ctx, runID)
	if err != nil {
		return nil, 0, err
	}
	hist := &historypb.History{Events: events}
	data, err := protojson.MarshalOptions{Indent: "  "}.Marshal(hist)
	if err != nil {
		return nil, 0, fmt.Errorf("encode the history of %s: %w", s.id, err)
	}
	return append(data, '\n'), len(hist.Events), nil
}

// events are the events of the session's run runID ("" for the latest).
func (s *Session) events(ctx context.Context, runID string) ([]*historypb.HistoryEvent, error) {
	var events []*historypb.HistoryEvent
	it := s.c.tc.GetWorkflowHistory(ctx, s.id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return nil, s.wrap("read the history of", err)
		}
		events = append(events, ev)
	}
	return events, nil
}
