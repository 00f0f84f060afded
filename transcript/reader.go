package transcript

import (
	"context"
	"fmt"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/grpc"

	"github.com/todoflow/todoflow/model"
)

// Error types of the reader's failures, both non-retryable: reading again
// finds the same.
const (
	// ErrTypeMismatch means what was read is not what the call was told to
	// expect (a tool call not at the message it was said to be): a bug.
	ErrTypeMismatch = "TranscriptMismatch"
	// ErrTypeHole means a message is neither in the worker's cache nor told
	// by the run's history (a call an older build scheduled). Its details
	// are the index of the first such message, which the workflow's next
	// call sends whole.
	ErrTypeHole = "TranscriptHole"
)

// History is what the reader needs of the Temporal server: a run's history
// events, from its start and from its end. A client's WorkflowService has
// both. It has no query: reading needs no workflow worker.
type History interface {
	GetWorkflowExecutionHistory(context.Context, *workflowservice.GetWorkflowExecutionHistoryRequest, ...grpc.CallOption) (*workflowservice.GetWorkflowExecutionHistoryResponse, error)
	GetWorkflowExecutionHistoryReverse(context.Context, *workflowservice.GetWorkflowExecutionHistoryReverseRequest, ...grpc.CallOption) (*workflowservice.GetWorkflowExecutionHistoryReverseResponse, error)
}

// Run names the run whose transcript is read.
type Run struct{ Namespace, WorkflowID, RunID string }

// Reader reads the transcripts of the runs whose activities a worker runs:
// from its cache, then from the run's history.
type Reader struct {
	history History
	dc      converter.DataConverter
	cache   *Cache
}

// NewReader returns a reader of the histories h serves, whose payloads dc
// decodes (nil: the SDK's default), with a cache of at most cacheBytes (0:
// DefaultCacheBytes; negative: no cache).
func NewReader(h History, dc converter.DataConverter, cacheBytes int64) *Reader {
	if dc == nil {
		dc = converter.GetDefaultDataConverter()
	}
	return &Reader{history: h, dc: dc, cache: NewCache(cacheBytes)}
}

// Messages returns the messages of spans of the run's transcript, after
// taking a model call's new messages nm (nil for a call that carries none).
func (r *Reader) Messages(ctx context.Context, run Run, nm *NewMessages, spans []Span) ([]model.Message, error) {
	return r.cache.Read(run.WorkflowID, run.RunID, nm, spans, func(spans []Span) ([]model.Message, error) {
		return r.fromHistory(ctx, run, spans)
	})
}

// Call returns tool call ref.Index of message ref.Message, checked against
// its id and digest.
func (r *Reader) Call(ctx context.Context, run Run, ref CallRef, id string) (model.ToolCall, error) {
	if call, ok := r.cache.Call(run.WorkflowID, run.RunID, ref, id); ok {
		return call, nil
	}
	msgs, err := r.fromHistory(ctx, run, []Span{{Start: ref.Message, End: ref.Message + 1}})
	if err != nil {
		return model.ToolCall{}, err
	}
	if call, ok := callOf(&msgs[0], ref, id); ok {
		return call, nil
	}
	return model.ToolCall{}, temporal.NewNonRetryableApplicationError(
		fmt.Sprintf("transcript of %s has no tool call %q at message %d, call %d", run.WorkflowID, id, ref.Message, ref.Index), ErrTypeMismatch, nil)
}

// Answer keeps a model call's answer in the cache (see Cache.Answer).
func (r *Reader) Answer(run Run, epoch, at int, m model.Message) {
	r.cache.Answer(run.WorkflowID, run.RunID, epoch, at, m)
}

// Remember keeps a tool's result in the cache (see Cache.Remember).
func (r *Reader) Remember(run Run, v string) {
	r.cache.Remember(run.WorkflowID, run.RunID, v)
}

// fromHistory reads the messages of spans from the run's history, all of
// them or none.
func (r *Reader) fromHistory(ctx context.Context, run Run, spans []Span) ([]model.Message, error) {
	t, err := r.historyFor(ctx, run, spans)
	if err != nil {
		return nil, err // the server's passing fault: the attempt is retried
	}
	out, holes := gather(spans, t.message)
	if len(holes) > 0 {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"messages [%d,%d) of the transcript of %s are neither in this worker's cache nor in the run's history: "+
				"the call was scheduled by an older build of todoflow, which read them with a query this build no longer has; "+
				"resend the message", holes[0].Start, holes[0].End, run.WorkflowID), ErrTypeHole, nil, holes[0].Start)
	}
	return fill(out, nil), nil
}

// callOf returns call ref.Index of m when it is the call ref names: its id
// is id, and its digest ref.Digest when ref has one.
func callOf(m *model.Message, ref CallRef, id string) (model.ToolCall, bool) {
	if m == nil || ref.Index < 0 || ref.Index >= len(m.ToolCalls) {
		return model.ToolCall{}, false
	}
	call := m.ToolCalls[ref.Index]
	if call.ID != id || (ref.Digest != "" && CallDigest(call) != ref.Digest) {
		return model.ToolCall{}, false
	}
	return call, true
}

// gather returns the messages of spans that has has, nil where it lacks
// one, and the spans it lacks, as the fewest: what a copy of the
// transcript (the cache, history) lacks is read at once.
func gather(spans []Span, has func(i int) *model.Message) (out []*model.Message, holes []Span) {
	for _, sp := range spans {
		for i := sp.Start; i < sp.End; i++ {
			m := has(i)
			out = append(out, m)
			if m != nil {
				continue
			}
			if n := len(holes); n > 0 && holes[n-1].End == i {
				holes[n-1].End++
			} else {
				holes = append(holes, Span{Start: i, End: i + 1})
			}
		}
	}
	return out, holes
}

// fill returns the messages of out, its nils taken from got in order.
func fill(out []*model.Message, got []model.Message) []model.Message {
	msgs := make([]model.Message, len(out))
	for i, m := range out {
		if m == nil {
			m, got = &got[0], got[1:]
		}
		msgs[i] = *m
	}
	return msgs
}
