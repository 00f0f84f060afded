package scenario

import (
	"context"

	sdkclient "go.temporal.io/sdk/client"

	"github.com/todoflow/todoflow/client"
)

// History exports a run's history as the JSON that `temporal workflow show
// --output json` prints and the SDK's replayer reads
// (worker.ReplayWorkflowHistoryFromJSONFile), with its number of events. An
// empty runID means the latest run. It is client.Session.History for a
// caller that holds a Temporal client (the tests).
func History(ctx context.Context, c sdkclient.Client, workflowID, runID string) ([]byte, int, error) {
	return client.New(c, client.Options{}).Session(workflowID).History(ctx, runID)
}
