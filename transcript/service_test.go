package transcript

import (
	"context"
	"strconv"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
)

// fakeHistory serves one run's history as the server pages it: forward
// from the start, or backwards from the end (the server's pages are batches
// of events; one event a batch here).
type fakeHistory struct {
	workflowID, runID string
	history           []*historypb.HistoryEvent
	// pages counts the pages read; err, when set, fails every read.
	pages int
	err   error
}

// readerOf reads h, with no cache.
func readerOf(h *fakeHistory) *Reader { return NewReader(h, nil, -1) }

func (s *fakeHistory) page(exec interface {
	GetWorkflowId() string
	GetRunId() string
}, size int32, token []byte) (int, int, error) {
	if s.err != nil {
		return 0, 0, s.err
	}
	if exec.GetWorkflowId() != s.workflowID || exec.GetRunId() != s.runID {
		return 0, 0, serviceerror.NewNotFound("workflow not found")
	}
	s.pages++
	from := 0
	if len(token) > 0 {
		from, _ = strconv.Atoi(string(token))
	}
	n := int(size)
	if n <= 0 || n > historyPageEvents {
		n = historyPageEvents
	}
	return from, min(from+n, len(s.history)), nil
}

func (s *fakeHistory) GetWorkflowExecutionHistory(_ context.Context, req *workflowservice.GetWorkflowExecutionHistoryRequest, _ ...grpc.CallOption) (*workflowservice.GetWorkflowExecutionHistoryResponse, error) {
	from, to, err := s.page(req.GetExecution(), req.GetMaximumPageSize(), req.GetNextPageToken())
	if err != nil {
		return nil, err
	}
	resp := &workflowservice.GetWorkflowExecutionHistoryResponse{History: &historypb.History{Events: s.history[from:to]}}
	if to < len(s.history) {
		resp.NextPageToken = []byte(strconv.Itoa(to))
	}
	return resp, nil
}

func (s *fakeHistory) GetWorkflowExecutionHistoryReverse(_ context.Context, req *workflowservice.GetWorkflowExecutionHistoryReverseRequest, _ ...grpc.CallOption) (*workflowservice.GetWorkflowExecutionHistoryReverseResponse, error) {
	// from and to count events back from the end.
	from, to, err := s.page(req.GetExecution(), req.GetMaximumPageSize(), req.GetNextPageToken())
	if err != nil {
		return nil, err
	}
	n := len(s.history)
	var evs []*historypb.HistoryEvent
	for i := from; i < to; i++ {
		evs = append(evs, s.history[n-1-i])
	}
	resp := &workflowservice.GetWorkflowExecutionHistoryReverseResponse{History: &historypb.History{Events: evs}}
	if to < n {
		resp.NextPageToken = []byte(strconv.Itoa(to))
	}
	return resp, nil
}
