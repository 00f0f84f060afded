package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/internal/text"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
)

// ReportName is the name of the activity that delivers one plan event to one
// reporter of a workflow input's `reporters` list.
const ReportName = "Report"

// Error types of the application errors Report fails with, for retry
// policies (NonRetryableErrorTypes) and for callers that inspect them.
const (
	// ErrTypeReportRetryable is a delivery that may succeed later: a write
	// error, a network error, a webhook answering 408, 425, 429 or 5xx.
	ErrTypeReportRetryable = "ReportRetryable"
	// ErrTypeReportConfig is a reporter configuration that cannot work: an
	// invalid config, a missing worker setting (state folder, headers
	// variable). Not retryable.
	ErrTypeReportConfig = "ReportConfig"
	// ErrTypeReportInput is an event that is not a JSON object with an
	// event_id and a type. Not retryable.
	ErrTypeReportInput = "ReportInput"
	// ErrTypeReportRejected is a webhook that refused the event (a 3xx or a
	// 4xx other than 408, 425 and 429). Not retryable.
	ErrTypeReportRejected = "ReportRejected"
	// ErrTypeReportForbidden is a webhook the worker does not post to: a URL
	// its header set is not bound to (TODOFLOW_WEBHOOK_URLS_<NAME>), or an
	// address on the worker's machine or private networks (loopback,
	// private, link-local, ...) that TODOFLOW_WEBHOOK_ALLOW_NETS does not
	// allow. Not retryable.
	ErrTypeReportForbidden = "ReportForbidden"
)

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

// reportRecord is what file and webhook reporters receive: one JSON object
// per event, a line of the file or the body of the POST.
type reportRecord struct {
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

// Report delivers one plan event to one reporter: a line in the worker's log
// (console), a JSON line appended to a file under the worker's state folder
// (file), or an HTTP POST (webhook).
//
// Errors are classified for Temporal's retries: a bad config or event, or a
// missing worker setting, is not retryable (ErrTypeReportConfig,
// ErrTypeReportInput); a write or network error, or a webhook answering 408,
// 425, 429 or 5xx, is (ErrTypeReportRetryable, with the webhook's
// Retry-After as the next retry delay); a webhook's other refusals are not
// (ErrTypeReportRejected), nor is a destination the worker refuses
// (ErrTypeReportForbidden). A webhook's error has its status, never its
// body. Delivery is at least once: a webhook receiver drops duplicates by
// the Idempotency-Key header.
func (a *Activities) Report(ctx context.Context, in ReportInput) error {
	fileCfg, hookCfg, err := in.Reporter.Parse()
	if err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeReportConfig, nil)
	}
	ev, err := parseReportEvent(in.Event)
	if err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeReportInput, nil)
	}
	if len(bytes.TrimSpace(in.Plan)) > 0 && !json.Valid(in.Plan) {
		err := errors.New("report: plan is not valid JSON")
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeReportInput, nil)
	}
	if in.WorkflowID == "" && activity.IsActivity(ctx) {
		in.WorkflowID = activity.GetInfo(ctx).WorkflowExecution.ID
	}
	if in.AgentID == "" {
		in.AgentID = ev.AgentID
	}

	switch in.Reporter.Type {
	case api.ReporterConsole:
		line := consoleLine(in, ev)
		if activity.IsActivity(ctx) {
			activity.GetLogger(ctx).Info(line)
		} else {
			slog.InfoContext(ctx, line)
		}
		return nil
	case api.ReporterFile:
		return a.reportFile(in, fileCfg)
	default:
		return reportWebhook(ctx, in, ev, hookCfg)
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

// consoleLine is the event as one readable line, e.g.
// agent main: step_completed step_2 "Write the fix" (event 7); plan "Fix the bug" 2/3 (66.7%)
func consoleLine(in ReportInput, ev reportEvent) string {
	var plan reportPlan
	if len(in.Plan) > 0 {
		_ = json.Unmarshal(in.Plan, &plan) // the plan only adds detail
	}
	var b strings.Builder
	agent := in.AgentID
	if agent == "" {
		agent = "?"
	}
	fmt.Fprintf(&b, "agent %s: %s", text.SpaceControls(agent), text.SpaceControls(ev.Type))
	if ev.StepID != "" {
		fmt.Fprintf(&b, " %s", text.SpaceControls(ev.StepID))
		for _, s := range plan.Steps {
			if s.StepID == ev.StepID && s.Description != "" {
				fmt.Fprintf(&b, " %q", excerpt(s.Description, 120))
				break
			}
		}
	}
	fmt.Fprintf(&b, " (event %s)", text.SpaceControls(ev.eventID()))
	if plan.Title != "" || plan.Progress != nil {
		b.WriteString("; plan")
		if plan.Title != "" {
			fmt.Fprintf(&b, " %q", excerpt(plan.Title, 120))
		}
		if p := plan.Progress; p != nil {
			pct := 0.0
			if p.Percent != nil {
				pct = *p.Percent
			} else if p.Total > 0 {
				pct = 100 * float64(p.Completed) / float64(p.Total)
			}
			fmt.Fprintf(&b, " %d/%d (%s%%)", p.Completed, p.Total, formatPercent(pct))
		}
	}
	return b.String()
}

// formatPercent writes a percentage with one decimal, rounded half away from
// zero, and a trailing ".0" dropped, as the plan checklist does.
func formatPercent(p float64) string {
	s := strconv.FormatFloat(math.Round(p*10)/10, 'f', 1, 64)
	return strings.TrimSuffix(s, ".0")
}

// excerpt shortens s to about n bytes on one line, cutting at a rune
// boundary: text.Shorten, but with text.CutIndex's cut, which counts a byte
// that is not valid UTF-8 as a rune of its own.
func excerpt(s string, n int) string {
	s = text.OneLine(s)
	if len(s) <= n {
		return s
	}
	return s[:text.CutIndex(s, n)] + "…"
}

// record is the JSON object a file line or a webhook body holds.
func record(in ReportInput) ([]byte, error) {
	rec := reportRecord{WorkflowID: in.WorkflowID, AgentID: in.AgentID, Event: in.Event}
	if len(bytes.TrimSpace(in.Plan)) > 0 {
		rec.Plan = in.Plan
	}
	// Marshal compacts the raw messages, so the record is one line.
	body, err := json.Marshal(rec)
	if err != nil {
		err = fmt.Errorf("report: encode event: %w", err)
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeReportInput, nil)
	}
	return body, nil
}

// reportFile appends the event as one JSON line to
// StateDir/reports/<session key>/<path>. The file is opened through an
// os.Root of the session's folder, so that a symbolic link cannot lead the
// write out of it either.
func (a *Activities) reportFile(in ReportInput, cfg *api.FileReport) error {
	if a.StateDir == "" {
		err := errors.New("file reporter: the worker has no state folder to write reports under")
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeReportConfig, nil)
	}
	line, err := record(in)
	if err != nil {
		return err
	}
	line = append(line, '\n')

	// A build from before session keys wrote into the reports folder itself.
	folder, err := sessionFolder(in.Session, ".")
	if err != nil {
		err = fmt.Errorf("file reporter: %w", err)
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeReportConfig, nil)
	}
	dir := filepath.Join(a.StateDir, ReportsFolder, folder)
	retryable := func(err error) error {
		err = fmt.Errorf("file reporter: %s: %w", filepath.Join(dir, cfg.Path), err)
		return temporal.NewApplicationError(err.Error(), ErrTypeReportRetryable)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return retryable(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return retryable(err)
	}
	defer root.Close()
	if sub := filepath.Dir(cfg.Path); sub != "." {
		if err := root.MkdirAll(sub, 0o755); err != nil {
			return retryable(err)
		}
	}
	f, err := root.OpenFile(cfg.Path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return retryable(err)
	}
	// One write per line: appends from concurrent reports do not interleave.
	_, err = f.Write(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return retryable(err)
	}
	return nil
}
