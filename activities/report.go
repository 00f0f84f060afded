package activities

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"

	"go.temporal.io/sdk/activity"

	"github.com/todoflow/todoflow/activities/report"
	"github.com/todoflow/todoflow/api"
)

// ReportName is the name of the activity that delivers one plan event to one
// reporter of a workflow input's `reporters` list.
const ReportName = "Report"

// ReportInput is one plan event for one reporter.
type ReportInput struct {
	Reporter api.ReporterConfig `json:"reporter"`
	// WorkflowID is the workflow the event belongs to; empty means the
	// workflow that scheduled the activity.
	WorkflowID string `json:"workflow_id"`
	// Session is the key of the run's session (SessionKey), whose folder
	// holds the file reporter's file; empty in an event of a build from
	// before session keys, whose files were named from the reports folder.
	Session string `json:"session,omitempty"`
	// AgentID is the agent whose plan it is; empty means the event's agent_id.
	AgentID string `json:"agent_id"`
	// Event is one plan event, a JSON object with at least event_id and type.
	Event json.RawMessage `json:"event"`
	// Plan is the plan after the event, if the caller has it.
	Plan json.RawMessage `json:"plan,omitempty"`
}

// Report delivers one plan event to one reporter, as package report says:
// the console reporter's line goes to the worker's log, the file reporter's
// file is under the session's folder of reports (<StateDir>/reports/<session
// key>), and an event without a workflow id is the calling workflow's. Its
// errors are report.Deliver's.
func (a *Activities) Report(ctx context.Context, in ReportInput) error {
	if in.WorkflowID == "" {
		in.WorkflowID = activity.GetInfo(ctx).WorkflowExecution.ID
	}
	rec := report.Record{WorkflowID: in.WorkflowID, AgentID: in.AgentID, Event: in.Event, Plan: in.Plan}
	return report.Deliver(ctx, in.Reporter, rec, report.Where{
		Log: func(line string) { activity.GetLogger(ctx).Info(line) },
		Folder: func() (string, error) {
			if a.StateDir == "" {
				return "", errors.New("the worker has no state folder to write reports under")
			}
			// A build from before session keys wrote into the reports folder itself.
			folder, err := sessionFolder(in.Session, ".")
			return filepath.Join(a.StateDir, ReportsFolder, folder), err
		},
	})
}
