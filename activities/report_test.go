package activities

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/todoflow/todoflow/activities/report"
	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
)

// captureLogger records the worker's log lines.
type captureLogger struct {
	mu    sync.Mutex
	lines []string
}

func (l *captureLogger) add(level, msg string, keyvals ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprint(level, " ", msg, " ", keyvals))
}
func (l *captureLogger) Debug(msg string, kv ...any) { l.add("DEBUG", msg, kv...) }
func (l *captureLogger) Info(msg string, kv ...any)  { l.add("INFO", msg, kv...) }
func (l *captureLogger) Warn(msg string, kv ...any)  { l.add("WARN", msg, kv...) }
func (l *captureLogger) Error(msg string, kv ...any) { l.add("ERROR", msg, kv...) }

var _ log.Logger = (*captureLogger)(nil)

// executeReport runs the Report activity of a in a test activity
// environment, as a worker would, logging to logger if not nil.
func executeReport(t *testing.T, a *Activities, in ReportInput, logger log.Logger) error {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	if logger != nil {
		s.SetLogger(logger)
	}
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	_, err := env.ExecuteActivity(ReportName, in)
	return err
}

// A file reporter writes in its own session's folder (issue 36: any run
// appended to any file of <state>/reports/): two sessions naming the same
// path write two files, a key that is no key is refused, and an event
// without a key (from a build before keys) goes where that build wrote.
func TestReportFileStaysInItsSession(t *testing.T) {
	stateDir := t.TempDir()
	a := &Activities{StateDir: stateDir}
	rep := api.ReporterConfig{Type: api.ReporterFile, Config: json.RawMessage(`{"path": "events.jsonl"}`)}
	victim, other := SessionKey("shared-id", "run-1"), SessionKey("shared-id", "run-2")
	tests := []struct {
		name     string
		in       ReportInput
		wantFile string // under stateDir; "" for a refusal
	}{
		{"the session's own file", ReportInput{WorkflowID: "shared-id", Session: victim}, filepath.Join("reports", victim, "events.jsonl")},
		{"another session naming the same path", ReportInput{WorkflowID: "shared-id", Session: other}, filepath.Join("reports", other, "events.jsonl")},
		{"a key that climbs", ReportInput{WorkflowID: "x", Session: "../" + victim[3:]}, ""},
		{"a key of another alphabet", ReportInput{WorkflowID: "x", Session: strings.Repeat("Z", 64)}, ""},
		{"an event of a build before keys", ReportInput{WorkflowID: "old"}, filepath.Join("reports", "events.jsonl")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Reporter, tt.in.Event = rep, json.RawMessage(`{"event_id": 7, "type": "step_completed"}`)
			err := executeReport(t, a, tt.in, nil)
			if tt.wantFile == "" {
				var app *temporal.ApplicationError
				if !errors.As(err, &app) || app.Type() != report.ErrTypeConfig || !strings.Contains(app.Error(), "want the 64 hexadecimal digits") {
					t.Errorf("Report = %v; want a %s error saying what a session key is", err, report.ErrTypeConfig)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join(stateDir, tt.wantFile))
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(data), "\n"); n != 1 || !strings.Contains(string(data), `"workflow_id":"`+tt.in.WorkflowID+`"`) {
				t.Errorf("%s holds %d lines: %s; want this event's alone", tt.wantFile, n, data)
			}
		})
	}
}

// The activity's part: the console line goes to the worker's log, an event
// names its workflow, and a worker without a state folder has no file
// reporter.
func TestReportThroughTheActivity(t *testing.T) {
	logger := &captureLogger{}
	in := ReportInput{Reporter: api.ReporterConfig{Type: api.ReporterConsole}, AgentID: "main", Event: json.RawMessage(`{"event_id": 1, "type": "plan_created"}`)}
	if err := executeReport(t, &Activities{}, in, logger); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(logger.lines, func(l string) bool { return strings.Contains(l, "agent main: plan_created (event 1)") }) {
		t.Errorf("the worker's log has no console line: %q", logger.lines)
	}
	in.Reporter = api.ReporterConfig{Type: api.ReporterFile, Config: json.RawMessage(`{"path": "x.log"}`)}
	err := executeReport(t, &Activities{}, in, nil)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != report.ErrTypeConfig || !strings.Contains(app.Error(), "no state folder") {
		t.Errorf("a file report without a state folder = %v; want a %s error saying so", err, report.ErrTypeConfig)
	}
}
