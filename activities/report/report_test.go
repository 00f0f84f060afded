package report

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/temporal"
)

func TestReporterConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		typ     string
		config  string
		wantErr string // "" when valid
	}{
		{"console", "console", ``, ""},
		{"console empty object", "console", `{}`, ""},
		{"console null", "console", `null`, ""},
		{"file", "file", `{"path": "plans.log"}`, ""},
		{"file in a subfolder", "file", `{"path": "team/plans.jsonl"}`, ""},
		{"file with inner dots", "file", `{"path": "a/../plans.log"}`, ""},
		{"webhook", "webhook", `{"url": "https://hooks.example.com/plans?x=1"}`, ""},
		{"webhook http with headers", "webhook", `{"url": "http://localhost:8080/p", "headers": "my-hook"}`, ""},
		{"webhook null headers", "webhook", `{"url": "https://example.com", "headers": null}`, ""},

		{"no type", "", ``, `"type" is required`},
		{"unknown type", "slack", ``, `unknown type "slack"`},
		{"config not an object", "file", `["plans.log"]`, "config must be a JSON object"},
		{"config a string", "webhook", `"https://example.com"`, "config must be a JSON object"},
		{"console takes no config", "console", `{"color": true}`, `unknown config field "color" (a console reporter takes no config)`},
		{"file without path", "file", `{}`, `"path" is required`},
		{"file with empty path", "file", `{"path": ""}`, `"path" is required`},
		{"file path not a string", "file", `{"path": 3}`, `"path" must be a string`},
		{"file absolute path", "file", `{"path": "/var/log/jaato/plans.log"}`, "not absolute"},
		{"file path leaving the folder", "file", `{"path": "../plans.log"}`, "must stay inside"},
		{"file path leaving the folder later", "file", `{"path": "a/../../plans.log"}`, "must stay inside"},
		{"file path is the folder", "file", `{"path": "."}`, "must name a file"},
		{"file path is a folder", "file", `{"path": "logs/"}`, "must name a file"},
		{"file unknown field", "file", `{"path": "p.log", "mode": "0600"}`, `unknown config field "mode" (known: path)`},
		{"webhook without url", "webhook", `{}`, `"url" is required`},
		{"webhook url not a string", "webhook", `{"url": {"host": "x"}}`, `"url" must be a string`},
		{"webhook relative url", "webhook", `{"url": "/plans"}`, "absolute http or https URL"},
		{"webhook other scheme", "webhook", `{"url": "ftp://example.com/plans"}`, "absolute http or https URL"},
		{"webhook url without host", "webhook", `{"url": "https:///plans"}`, "has no host"},
		{"webhook bad url", "webhook", `{"url": "https://exa mple.com:x/"}`, "not a valid URL"},
		{"webhook url with credentials", "webhook", `{"url": "https://user:pw@example.com/"}`, "must not carry credentials"},
		{"webhook literal headers", "webhook", `{"url": "https://example.com", "headers": {"Authorization": "Bearer t0ken"}}`,
			"put the headers, as a JSON object, in the worker's environment variable TODOFLOW_WEBHOOK_HEADERS_<NAME>"},
		{"webhook headers not a string", "webhook", `{"url": "https://example.com", "headers": 1}`, `"headers" must be a string naming`},
		{"webhook headers empty name", "webhook", `{"url": "https://example.com", "headers": ""}`, "letters or digits"},
		{"webhook headers punctuation", "webhook", `{"url": "https://example.com", "headers": "--"}`, "letters or digits"},
		{"webhook unknown field", "webhook", `{"url": "https://example.com", "method": "PUT"}`, `unknown config field "method" (known: url, headers)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := api.ReporterConfig{Type: tt.typ, Config: json.RawMessage(tt.config)}.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tt.wantErr != "" && err == nil:
				t.Fatalf("Validate() = nil, want an error containing %q", tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(tt.wantErr)):
				t.Fatalf("Validate() = %q, want it to contain %q", err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "t0ken") {
				t.Errorf("error %q repeats the secret", err)
			}
		})
	}
}

func TestReporterConfigJSON(t *testing.T) {
	var r api.ReporterConfig
	if err := json.Unmarshal([]byte(`{"type": "file", "config": {"path": "p.log"}}`), &r); err != nil {
		t.Fatal(err)
	}
	if r.Type != api.ReporterFile || r.Validate() != nil {
		t.Fatalf("got %+v (%v)", r, r.Validate())
	}
}

// input is one plan event for one reporter, as the Report activity hands
// it over.
type input struct {
	Reporter            api.ReporterConfig
	WorkflowID, AgentID string
	Event, Plan         json.RawMessage
}

// deliver delivers in to its reporter, with dir as the file reporter's
// folder, and the console reporter's lines appended to lines if not nil.
func deliver(t *testing.T, dir string, in input, lines *[]string) error {
	t.Helper()
	rec := Record{WorkflowID: in.WorkflowID, AgentID: in.AgentID, Event: in.Event, Plan: in.Plan}
	return Deliver(t.Context(), in.Reporter, rec, Where{
		Log: func(line string) {
			if lines != nil {
				*lines = append(*lines, line)
			}
		},
		Folder: func() (string, error) { return dir, nil },
	})
}

// wantAppErr checks that err is an application error of the type,
// retryable or not.
func wantAppErr(t *testing.T, err error, typ string, nonRetryable bool) *temporal.ApplicationError {
	t.Helper()
	app, ok := errors.AsType[*temporal.ApplicationError](err)
	if !ok || app.Type() != typ || app.NonRetryable() != nonRetryable {
		t.Fatalf("got %v; want an application error of type %q, non-retryable %v", err, typ, nonRetryable)
	}
	return app
}

const (
	testPlan  = `{"plan_id": "p1", "title": "Fix the bug", "status": "active", "steps": [{"step_id": "step_1", "description": "Read the code"}, {"step_id": "step_2", "description": "Write the fix"}, {"step_id": "step_3", "description": "Test"}], "progress": {"total": 3, "completed": 2, "percent": 66.66666}}`
	testEvent = `{"event_id": 7, "type": "step_completed", "agent_id": "main", "plan_id": "p1", "step_id": "step_2", "data": {}}`
)

func TestReportConsole(t *testing.T) {
	tests := []struct {
		name  string
		in    input
		wants []string
	}{
		{"with plan", input{WorkflowID: "wf-1", AgentID: "main", Event: json.RawMessage(testEvent), Plan: json.RawMessage(testPlan)},
			[]string{"agent main", "step_completed", `step_2 "Write the fix"`, "event 7", `plan "Fix the bug" 2/3 (66.7%)`}},
		{"agent from the event, no plan", input{Event: json.RawMessage(`{"event_id": 1, "type": "plan_created", "agent_id": "researcher"}`)},
			[]string{"agent researcher: plan_created (event 1)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var lines []string
			tt.in.Reporter = api.ReporterConfig{Type: api.ReporterConsole}
			if err := deliver(t, t.TempDir(), tt.in, &lines); err != nil {
				t.Fatal(err)
			}
			var found string
			for _, l := range lines {
				if strings.Contains(l, tt.wants[0]) {
					found = l
				}
			}
			if found == "" {
				t.Fatalf("no log line with %q in %q", tt.wants[0], lines)
			}
			if strings.Contains(found, "\n") {
				t.Errorf("log line %q is not one line", found)
			}
			for _, w := range tt.wants {
				if !strings.Contains(found, w) {
					t.Errorf("log line %q does not contain %q", found, w)
				}
			}
		})
	}
}

func TestReportFile(t *testing.T) {
	stateDir := t.TempDir()
	rep := api.ReporterConfig{Type: api.ReporterFile, Config: json.RawMessage(`{"path": "team/plans.jsonl"}`)}
	events := []struct{ event, plan string }{
		{"{\n  \"event_id\": 1,\n  \"type\": \"plan_created\"\n}", testPlan},
		{`{"event_id": 2, "type": "plan_started"}`, ""},
		{testEvent, testPlan},
	}
	for _, e := range events {
		in := input{Reporter: rep, WorkflowID: "wf-1", AgentID: "main", Event: json.RawMessage(e.event)}
		if e.plan != "" {
			in.Plan = json.RawMessage(e.plan)
		}
		if err := deliver(t, stateDir, in, nil); err != nil {
			t.Fatal(err)
		}
	}

	data, err := os.ReadFile(filepath.Join(stateDir, "team", "plans.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != len(events) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(events), data)
	}
	for i, line := range lines {
		var rec struct {
			WorkflowID string         `json:"workflow_id"`
			AgentID    string         `json:"agent_id"`
			Event      map[string]any `json:"event"`
			Plan       map[string]any `json:"plan"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("line %d %q: %v", i+1, line, err)
		}
		if rec.WorkflowID != "wf-1" || rec.AgentID != "main" {
			t.Errorf("line %d: workflow %q agent %q", i+1, rec.WorkflowID, rec.AgentID)
		}
		if id, want := rec.Event["event_id"], []float64{1, 2, 7}[i]; id != want {
			t.Errorf("line %d: event_id %v, lines out of order?", i+1, id)
		}
		if (rec.Plan != nil) != (events[i].plan != "") {
			t.Errorf("line %d: plan %v, want one: %v", i+1, rec.Plan, events[i].plan != "")
		}
	}
	if strings.Contains(lines[1], `"plan"`) {
		t.Errorf("line without a plan has a plan field: %s", lines[1])
	}
}

func TestReportFileErrors(t *testing.T) {
	event := json.RawMessage(testEvent)
	t.Run("write error is retryable", func(t *testing.T) {
		stateDir := t.TempDir()
		// The path is a folder: opening it for writing fails.
		if err := os.MkdirAll(filepath.Join(stateDir, "plans.log"), 0o755); err != nil {
			t.Fatal(err)
		}
		err := deliver(t, stateDir, input{
			Reporter: api.ReporterConfig{Type: api.ReporterFile, Config: json.RawMessage(`{"path": "plans.log"}`)}, Event: event}, nil)
		wantAppErr(t, err, ErrTypeRetryable, false)
	})
	t.Run("symlink out of the folder", func(t *testing.T) {
		stateDir, outside := t.TempDir(), t.TempDir()
		if err := os.Symlink(outside, filepath.Join(stateDir, "out")); err != nil {
			t.Skip("no symlinks:", err)
		}
		err := deliver(t, stateDir, input{
			Reporter: api.ReporterConfig{Type: api.ReporterFile, Config: json.RawMessage(`{"path": "out/plans.log"}`)}, Event: event}, nil)
		if err == nil {
			t.Fatal("wrote through a symlink out of the reports folder")
		}
		if _, statErr := os.Stat(filepath.Join(outside, "plans.log")); statErr == nil {
			t.Fatal("file created outside the reports folder")
		}
	})
	tests := []struct {
		name    string
		dir     string
		in      input
		errType string
		wantErr string
	}{
		{"absolute path", t.TempDir(),
			input{Reporter: api.ReporterConfig{Type: api.ReporterFile, Config: json.RawMessage(`{"path": "/tmp/x.log"}`)}, Event: event},
			ErrTypeConfig, "not absolute"},
		{"event not an object", t.TempDir(),
			input{Reporter: api.ReporterConfig{Type: api.ReporterFile, Config: json.RawMessage(`{"path": "x.log"}`)}, Event: json.RawMessage(`[1]`)},
			ErrTypeInput, "JSON object"},
		{"event without id", t.TempDir(),
			input{Reporter: api.ReporterConfig{Type: api.ReporterConsole}, Event: json.RawMessage(`{"type": "plan_created"}`)},
			ErrTypeInput, "no event_id"},
		{"event without type", t.TempDir(),
			input{Reporter: api.ReporterConfig{Type: api.ReporterConsole}, Event: json.RawMessage(`{"event_id": 3}`)},
			ErrTypeInput, "no type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			appErr := wantAppErr(t, deliver(t, tt.dir, tt.in, nil), tt.errType, true)
			if !strings.Contains(appErr.Error(), tt.wantErr) {
				t.Errorf("error %q does not contain %q", appErr.Error(), tt.wantErr)
			}
		})
	}
}

func TestReporterRetryWindow(t *testing.T) {
	tests := []struct {
		seconds int
		want    time.Duration
		wantErr bool
	}{
		{0, api.DefaultReportRetryWindow, false},
		{30, 30 * time.Second, false},
		{3600, time.Hour, false},
		{3601, 0, true},
		{-1, 0, true},
	}
	for _, tt := range tests {
		r := api.ReporterConfig{Type: api.ReporterConsole, RetryWindowS: tt.seconds}
		err := r.Validate()
		if (err != nil) != tt.wantErr {
			t.Errorf("retry_window_s %d: err = %v", tt.seconds, err)
		}
		if err == nil && r.RetryWindow() != tt.want {
			t.Errorf("retry_window_s %d: window %v, want %v", tt.seconds, r.RetryWindow(), tt.want)
		}
	}
}
