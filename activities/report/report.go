package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/temporal"
)

// Error types of the application errors Deliver (the Report activity) fails
// with, for retry policies and for callers that inspect them.
const (
	// ErrTypeRetryable is a delivery that may succeed later: a write
	// error, a network error, a webhook answering 408, 425, 429 or 5xx.
	ErrTypeRetryable = "ReportRetryable"
	// ErrTypeConfig is a reporter configuration that cannot work: an
	// invalid config, a missing worker setting (state folder, headers
	// variable). Not retryable.
	ErrTypeConfig = "ReportConfig"
	// ErrTypeInput is an event that is not a JSON object with an
	// event_id and a type. Not retryable.
	ErrTypeInput = "ReportInput"
	// ErrTypeRejected is a webhook that refused the event (a 3xx or a
	// 4xx other than 408, 425 and 429). Not retryable.
	ErrTypeRejected = "ReportRejected"
	// ErrTypeForbidden is a webhook the worker does not post to: a URL
	// its header set is not bound to (TODOFLOW_WEBHOOK_URLS_<NAME>), or an
	// address on the worker's machine or private networks (loopback,
	// private, link-local, ...) that TODOFLOW_WEBHOOK_ALLOW_NETS does not
	// allow. Not retryable.
	ErrTypeForbidden = "ReportForbidden"
)

// Record is one plan event as the file and webhook reporters receive it:
// one JSON object per event, a line of the file or the body of the POST.
// Plan is the plan after the event, if the caller has it; AgentID, when
// empty, is the event's agent_id.
type Record struct {
	WorkflowID string          `json:"workflow_id"`
	AgentID    string          `json:"agent_id"`
	Event      json.RawMessage `json:"event"`
	Plan       json.RawMessage `json:"plan,omitempty"`
}

// reportEvent holds the fields of a plan event that Report reads.
type reportEvent struct {
	EventID json.RawMessage `json:"event_id"`
	Type    string          `json:"type"`
	AgentID string          `json:"agent_id"`
	StepID  string          `json:"step_id"`
}

// reportPlan holds the fields of a plan that the console reporter shows.
type reportPlan struct {
	Title string `json:"title"`
	Steps []struct {
		StepID      string `json:"step_id"`
		Description string `json:"description"`
	} `json:"steps"`
	Progress *struct {
		Total     int      `json:"total"`
		Completed int      `json:"completed"`
		Percent   *float64 `json:"percent"`
	} `json:"progress"`
}

// Where is what Deliver needs of the worker.
type Where struct {
	// Log takes the console reporter's line.
	Log func(line string)
	// Folder returns the folder the file reporter's path is in, or why
	// there is none.
	Folder func() (string, error)
}

// Deliver delivers one plan event to the reporter to. Its errors are typed
// for Temporal's retries (ErrType*); a webhook receiver drops the duplicates
// of a retry by the Idempotency-Key header.
func Deliver(ctx context.Context, to api.ReporterConfig, rec Record, w Where) error {
	fileCfg, hookCfg, err := to.Parse()
	if err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeConfig, nil)
	}
	ev, err := parseReportEvent(rec.Event)
	if err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInput, nil)
	}
	if len(bytes.TrimSpace(rec.Plan)) > 0 && !json.Valid(rec.Plan) {
		err := errors.New("report: plan is not valid JSON")
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInput, nil)
	}
	if rec.AgentID == "" {
		rec.AgentID = ev.AgentID
	}
	switch to.Type {
	case api.ReporterConsole:
		w.Log(consoleLine(rec, ev))
		return nil
	case api.ReporterFile:
		return reportFile(rec, fileCfg, w.Folder)
	default:
		return reportWebhook(ctx, rec, ev, hookCfg)
	}
}

// parseReportEvent checks that the event is a JSON object with an event_id
// and a type.
func parseReportEvent(raw json.RawMessage) (reportEvent, error) {
	var ev reportEvent
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(trimmed, &ev) != nil {
		return ev, errors.New("report: event must be a JSON object with event_id and type")
	}
	if id := bytes.TrimSpace(ev.EventID); len(id) == 0 || bytes.Equal(id, []byte("null")) || bytes.Equal(id, []byte(`""`)) {
		return ev, errors.New("report: event has no event_id")
	}
	if ev.Type == "" {
		return ev, errors.New("report: event has no type")
	}
	return ev, nil
}

// eventID returns the event id as text: a string's content, a number as written.
func (ev reportEvent) eventID() string {
	var s string
	if json.Unmarshal(ev.EventID, &s) == nil {
		return s
	}
	return string(bytes.TrimSpace(ev.EventID))
}

// line is the JSON object a file line or a webhook body holds.
func (rec Record) line() ([]byte, error) {
	if len(bytes.TrimSpace(rec.Plan)) == 0 {
		rec.Plan = nil
	}
	// Marshal compacts the raw messages, so the record is one line.
	body, err := json.Marshal(rec)
	if err != nil {
		err = fmt.Errorf("report: encode event: %w", err)
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInput, nil)
	}
	return body, nil
}
