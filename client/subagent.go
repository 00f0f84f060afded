package client

import (
	"context"
	"fmt"
	"github.com/todoflow/todoflow/api"
)

// SubagentReply is the final answer of agent id, a finished subagent of the
// tree under s (whose state is st, where id shows as completed or failed):
// its run's result, which the server keeps and answers without a worker.
// A subagent that failed is the error its run failed with.
func (s *Session) SubagentReply(ctx context.Context, st api.State, id string) (string, error) {
	m, err := s.member(ctx, st, id, 2)
	if err != nil {
		return "", err
	}
	res, err := m.Wait(ctx)
	if err != nil {
		return "", fmt.Errorf("subagent %s: %w", id, err)
	}
	return res.Reply, nil
}
