package activities

import (
	"context"
	"strconv"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
)

// WorkflowService serves queryClient's history as the server pages it:
// forward from the start, or backwards from the end, pageEvents events a
// page (the server's pages are batches of events; one event a batch here).
func (c *queryClient) WorkflowService() workflowservice.WorkflowServiceClient {
	return &historyService{c: c}
}

// historyService is the part of the workflow service that history reads
// use; other methods are not called (they panic).
type historyService struct {
	workflowservice.WorkflowServiceClient
	c *queryClient
}

func (s *historyService) page(exec interface {
	GetWorkflowId() string
	GetRunId() string
}, size int32, token []byte) (int, int, error) {
	if exec.GetWorkflowId() != s.c.workflowID || exec.GetRunId() != s.c.runID {
		return 0, 0, serviceerror.NewNotFound("workflow not found")
	}
	s.c.pages++
	from := 0
	if len(token) > 0 {
		from, _ = strconv.Atoi(string(token))
	}
	n := int(size)
	if n <= 0 || n > historyPageEvents {
		n = historyPageEvents
	}
	return from, min(from+n, len(s.c.history)), nil
}

func (s *historyService) GetWorkflowExecutionHistory(_ context.Context, req *workflowservice.GetWorkflowExecutionHistoryRequest, _ ...grpc.CallOption) (*workflowservice.GetWorkflowExecutionHistoryResponse, error) {
	from, to, err := s.page(req.GetExecution(), req.GetMaximumPageSize(), req.GetNextPageToken())
	if err != nil {
		return nil, err
	}
	resp := &workflowservice.GetWorkflowExecutionHistoryResponse{History: &historypb.History{Events: s.c.history[from:to]}}
	if to < len(s.c.history) {
		resp.NextPageToken = []byte(strconv.Itoa(to))
	}
	return resp, nil
}

func (s *historyService) GetWorkflowExecutionHistoryReverse(_ context.Context, req *workflowservice.GetWorkflowExecutionHistoryReverseRequest, _ ...grpc.CallOption) (*workflowservice.GetWorkflowExecutionHistoryReverseResponse, error) {
	// from and to count events back from the end.
	from, to, err := s.page(req.GetExecution(), req.GetMaximumPageSize(), req.GetNextPageToken())
	if err != nil {
		return nil, err
	}
	n := len(s.c.history)
	var evs []*historypb.HistoryEvent
	for i := from; i < to; i++ {
		evs = append(evs, s.c.history[n-1-i])
	}
	resp := &workflowservice.GetWorkflowExecutionHistoryReverseResponse{History: &historypb.History{Events: evs}}
	if to < n {
		resp.NextPageToken = []byte(strconv.Itoa(to))
	}
	return resp, nil
}
