package scenario

import (
	"context"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"
)

// History exports a run's history as the JSON that `temporal workflow show
// --output json` prints and the SDK's replayer reads
// (worker.ReplayWorkflowHistoryFromJSONFile). An empty runID means the latest run.
func History(ctx context.Context, c client.Client, workflowID, runID string) ([]byte, int, error) {
	hist := &historypb.History{}
	it := c.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return nil, 0, fmt.Errorf("read history of %s: %w", workflowID, err)
		}
		hist.Events = append(hist.Events, ev)
	}
	data, err := protojson.MarshalOptions{Indent: "  "}.Marshal(hist)
	if err != nil {
		return nil, 0, fmt.Errorf("encode history of %s: %w", workflowID, err)
	}
	return append(data, '\n'), len(hist.Events), nil
}
