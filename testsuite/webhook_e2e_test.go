package testsuite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoflow/todoflow/activities/report"
	"github.com/todoflow/todoflow/api"

	"github.com/todoflow/todoflow/activities"
	"github.com/todoflow/todoflow/todo"
)

// hookRequest is one request a test webhook received.
type hookRequest struct {
	At            time.Time
	Status        int // what the hook answered
	Key           string
	Token         string
	Authorization string
	ContentType   string
	Body          []byte
}

// hookBody is the body of a webhook report (activities.reportRecord).
type hookBody struct {
	WorkflowID string          `json:"workflow_id"`
	AgentID    string          `json:"agent_id"`
	Event      todo.Event      `json:"event"`
	Plan       json.RawMessage `json:"plan"`
}

// hook is a webhook receiver that answers the n-th request (1-based) as
// answer says and records every request.
type hook struct {
	mu     sync.Mutex
	reqs   []hookRequest
	answer func(n int) (status int, retryAfter string)
	// echo, when set, writes the body of answers that are not 2xx, as a
	// receiver that quotes what it refused does.
	echo func(r *http.Request) string
	URL  string
}

// hookNets is the setting that lets workers post to the test hooks, which
// listen on loopback, where a worker posts nothing unless allowed.
const hookNets = "127.0.0.0/8, ::1"

// newHook starts a hook. It allows loopback to every worker the package
// starts from then on, in process or a child process, for the life of the
// test binary: the tests that do not set the worker's environment (parallel
// ones among them, which cannot) use hooks too. A test of the refusal sets
// the variable back for itself (t.Setenv).
func newHook(t *testing.T, answer func(n int) (int, string)) *hook {
	t.Helper()
	if err := os.Setenv(report.WebhookAllowNetsEnv, hookNets); err != nil {
		t.Fatal(err)
	}
	h := &hook{answer: answer}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		status, retryAfter := h.answer(len(h.reqs) + 1)
		h.reqs = append(h.reqs, hookRequest{
			At:            time.Now(),
			Status:        status,
			Key:           r.Header.Get("Idempotency-Key"),
			Token:         r.Header.Get("X-Token"),
			Authorization: r.Header.Get("Authorization"),
			ContentType:   r.Header.Get("Content-Type"),
			Body:          body,
		})
		echo := h.echo
		h.mu.Unlock()
		if r.Method != http.MethodPost {
			status = http.StatusMethodNotAllowed
		}
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.WriteHeader(status)
		if echo != nil && status/100 != 2 {
			fmt.Fprint(w, echo(r))
			return
		}
		fmt.Fprintf(w, "answer %d", status)
	}))
	t.Cleanup(srv.Close)
	h.URL = srv.URL + "/todoflow/events"
	return h
}

func (h *hook) requests() []hookRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hookRequest(nil), h.reqs...)
}

// webhookScenario is scenario 05 (a plan with approval that ends failed)
// reporting to url, with 05's expectations and extra ones.
func webhookScenario(t *testing.T, url, headers string, expect ...string) string {
	cfg := map[string]any{"url": url}
	if headers != "" {
		cfg["headers"] = headers
	}
	reporters := mustJSON(t, []any{map[string]any{"type": "webhook", "config": cfg}})
	expect = append([]string{
		`.run_status == "completed"`,
		`.state.plan.status == "failed"`,
		`[.state.plan.steps[].status] == ["completed", "failed", "skipped"]`,
		`.state.plan.progress.percent == 33.3`,
		`[.messages[] | select(.role == "tool" and .is_error)] | length == 1`,
		`([.state.events[].type] | index("plan_failed")) != null`,
		`(.state.reporters | length) == 1 and .state.reporters[0].type == "webhook" and .state.reporters[0].pending == 0`,
	}, expect...)
	return fmt.Sprintf(`{
  "name": "scenario 05 with a webhook reporter",
  "input": {"prompt": "Refactor the auth module.", "reporters": %s},
  "model": %s,
  "user": %s,
  "expect": %s
}`, reporters, plan05Model, approvePlan, mustJSON(t, expect))
}

// TestWebhookReporterDeliversEveryEventOnce: a webhook that is unavailable
// for its first two requests (503, Retry-After: 1) still receives every plan
// event of the run exactly once, in event_id order, with the headers the
// worker's environment holds for the name the input gives, and the state
// counts the deliveries.
//
// Not parallel: t.Setenv, read by the in-process worker.
func TestWebhookReporterDeliversEveryEventOnce(t *testing.T) {
	t.Setenv(report.WebhookHeadersEnv("test"), `{"X-Token": "s3cret"}`)
	h := newHook(t, func(n int) (int, string) {
		if n <= 2 {
			return http.StatusServiceUnavailable, "1"
		}
		return http.StatusOK, ""
	})
	t.Setenv(report.WebhookURLsEnv("test"), h.URL)
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	sc := writeScenario(t, webhookScenario(t, h.URL, "test",
		`.state.reporters[0].delivered == (.state.events | length)`,
		`.state.reporters[0].failed == 0`,
	))
	out, st := play(t, s.c, sc, 2*time.Minute)
	checkExpect(t, sc, out)

	if len(st.Events) < 5 {
		t.Fatalf("the run has %d events; scenario 05 makes more", len(st.Events))
	}
	if len(st.Reporters) != 1 {
		t.Fatalf("state.reporters = %+v, want one webhook", st.Reporters)
	}
	if r := st.Reporters[0]; r.Delivered != len(st.Events) || r.Failed != 0 || r.Pending != 0 || r.LastError != "" {
		t.Errorf("state.reporters[0] = %+v, want %d delivered, none failed or pending, no last_error", r, len(st.Events))
	}

	reqs := h.requests()
	var delivered []hookRequest
	seen := map[string]bool{}
	for i, r := range reqs {
		if r.Token != "s3cret" {
			t.Errorf("request %d (%s) has X-Token %q, want the worker's s3cret", i+1, r.Key, r.Token)
		}
		if r.ContentType != "application/json" {
			t.Errorf("request %d has Content-Type %q", i+1, r.ContentType)
		}
		if bytes.Contains(r.Body, []byte("s3cret")) {
			t.Errorf("request %d carries the header value in its body", i+1)
		}
		if r.Status/100 != 2 {
			continue
		}
		if seen[r.Key] {
			t.Errorf("event %s was delivered twice", r.Key)
		}
		seen[r.Key] = true
		delivered = append(delivered, r)
	}
	if len(reqs) != len(st.Events)+2 {
		t.Errorf("the hook got %d requests, want one per event (%d) plus the two refused ones", len(reqs), len(st.Events))
	}
	for i := 0; i < 2 && i < len(reqs); i++ {
		if want := eventKey(out.WorkflowID, st.Events[0]); reqs[i].Key != want {
			t.Errorf("refused request %d is for %s, want the first event (%s): events go one at a time", i+1, reqs[i].Key, want)
		}
	}
	if len(reqs) >= 3 {
		t.Logf("retries after a 503 with Retry-After: 1 came %s and %s later",
			reqs[1].At.Sub(reqs[0].At).Round(time.Millisecond), reqs[2].At.Sub(reqs[1].At).Round(time.Millisecond))
	}
	if len(delivered) != len(st.Events) {
		t.Fatalf("%d events delivered, want %d (every event of the state)", len(delivered), len(st.Events))
	}
	for i, ev := range st.Events {
		d := delivered[i]
		if want := eventKey(out.WorkflowID, ev); d.Key != want {
			t.Errorf("delivery %d has Idempotency-Key %q, want %q (event_id order)", i+1, d.Key, want)
		}
		var body hookBody
		if err := json.Unmarshal(d.Body, &body); err != nil {
			t.Errorf("delivery %d: body is not a report: %v: %s", i+1, err, d.Body)
			continue
		}
		if body.WorkflowID != out.WorkflowID || body.AgentID != api.DefaultAgentID {
			t.Errorf("delivery %d is for %s/%s, want %s/main", i+1, body.WorkflowID, body.AgentID, out.WorkflowID)
		}
		if !sameEvent(body.Event, ev) {
			t.Errorf("delivery %d carries event %+v, want the state's %+v", i+1, body.Event, ev)
		}
		if len(body.Plan) == 0 || string(body.Plan) == "null" {
			t.Errorf("delivery %d has no plan", i+1)
		}
	}
}

// TestWebhookReporterFailingDoesNotStall: a webhook that refuses every event
// loses them, says so in the state, and the run completes all the same.
//
// A webhook that answers a plain 500 is retried for the whole retry window
// of each event (2 minutes, workflows/reporters.go) and a finishing run waits
// up to 5 minutes for its reporters, so such a run takes minutes; these
// cases make the receiver end each event's window at its first answer
// instead: a Retry-After beyond the window (the server does not schedule a
// retry past ScheduleToClose) and a 4xx (not retryable).
func TestWebhookReporterFailingDoesNotStall(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	for _, tc := range []struct {
		name       string
		status     int
		retryAfter string
	}{
		{"500 with Retry-After beyond the retry window", http.StatusInternalServerError, "3600"},
		{"400 refused", http.StatusBadRequest, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHook(t, func(int) (int, string) { return tc.status, tc.retryAfter })
			sc := writeScenario(t, webhookScenario(t, h.URL, "",
				`.state.reporters[0].delivered == 0`,
				`.state.reporters[0].failed == (.state.events | length)`,
				fmt.Sprintf(`.state.reporters[0].last_error | contains("%d")`, tc.status),
			))
			start := time.Now()
			out, st := play(t, s.c, sc, 2*time.Minute)
			checkExpect(t, sc, out)
			t.Logf("the run took %s; reporters: %+v", time.Since(start).Round(time.Millisecond), st.Reporters)
			// What would hold the run up is a delivery retried or timed out
			// (its window is 2 minutes, the drain's 5): history shows each.
			if n := interruptedActivities(t, s.c, out.WorkflowID, activities.ReportName); n > 0 {
				t.Errorf("%d deliveries were retried or timed out: a failing webhook held the run up", n)
			}
			reqs := h.requests()
			if len(reqs) != len(st.Events) {
				t.Errorf("the hook got %d requests, want one attempt per event (%d)", len(reqs), len(st.Events))
			}
			for i := 0; i < len(reqs) && i < len(st.Events); i++ {
				if want := eventKey(out.WorkflowID, st.Events[i]); reqs[i].Key != want {
					t.Errorf("request %d has Idempotency-Key %q, want %q", i+1, reqs[i].Key, want)
				}
			}
			if len(st.Reporters) == 1 && !strings.Contains(st.Reporters[0].LastError, "webhook") {
				t.Errorf("last_error %q does not say which reporter failed", st.Reporters[0].LastError)
			}
		})
	}
}

// TestWebhookRefusedDestinations: a webhook the worker must not post to
// (loopback without TODOFLOW_WEBHOOK_ALLOW_NETS; a header set sent outside
// the URLs its TODOFLOW_WEBHOOK_URLS_<NAME> binds it to) receives nothing,
// the credentials least of all; each event fails at once with an error
// that names the setting, and the run completes.
//
// Not parallel: t.Setenv, read by the in-process worker.
func TestWebhookRefusedDestinations(t *testing.T) {
	const secret = "e2e-bound-TOKEN-5k2j8h"
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	for _, tc := range []struct {
		name    string
		headers string
		allow   string            // TODOFLOW_WEBHOOK_ALLOW_NETS
		env     map[string]string // more of the worker's environment
		wantErr []string
	}{
		{name: "loopback without the allow setting", allow: "",
			wantErr: []string{"is loopback", report.WebhookAllowNetsEnv}},
		{name: "headers outside their binding", headers: "e2e-bound", allow: hookNets,
			env: map[string]string{
				report.WebhookHeadersEnv("e2e-bound"): `{"Authorization": "Bearer ` + secret + `"}`,
				report.WebhookURLsEnv("e2e-bound"):    "https://hooks.example.com/todoflow",
			},
			wantErr: []string{"are not sent to", "TODOFLOW_WEBHOOK_URLS_E2E_BOUND does not cover"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHook(t, func(int) (int, string) { return http.StatusOK, "" })
			t.Setenv(report.WebhookAllowNetsEnv, tc.allow)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			expect := []string{
				`.state.reporters[0].delivered == 0`,
				`.state.reporters[0].failed == (.state.events | length)`,
			}
			for _, w := range tc.wantErr {
				expect = append(expect, fmt.Sprintf(`.state.reporters[0].last_error | contains("%s")`, w))
			}
			sc := writeScenario(t, webhookScenario(t, h.URL, tc.headers, expect...))
			start := time.Now()
			out, st := play(t, s.c, sc, 2*time.Minute)
			checkExpect(t, sc, out)
			t.Logf("the run took %s; reporters: %+v", time.Since(start).Round(time.Millisecond), st.Reporters)
			if reqs := h.requests(); len(reqs) != 0 {
				t.Errorf("the hook got %d requests (Authorization %q), want none", len(reqs), reqs[0].Authorization)
			}
			if len(st.Reporters) == 1 && strings.Contains(st.Reporters[0].LastError, secret) {
				t.Errorf("last_error %q shows the header's value", st.Reporters[0].LastError)
			}
		})
	}
}

// eventKey is the Idempotency-Key of a root agent's event.
func eventKey(workflowID string, ev todo.Event) string {
	return workflowID + "/" + ev.AgentID + "/" + strconv.Itoa(ev.EventID)
}

func sameEvent(a, b todo.Event) bool {
	if a.EventID != b.EventID || a.Type != b.Type || a.AgentID != b.AgentID || a.PlanID != b.PlanID || a.StepID != b.StepID {
		return false
	}
	var da, db any
	return json.Unmarshal(a.Data, &da) == nil && json.Unmarshal(b.Data, &db) == nil && fmt.Sprint(da) == fmt.Sprint(db)
}

// TestWebhookRetryWindow: a webhook that answers 500 for ever costs each
// event the reporter's retry_window_s, not the default two minutes, and the
// run completes with every event counted as failed.
func TestWebhookRetryWindow(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	h := newHook(t, func(int) (int, string) { return http.StatusInternalServerError, "" })
	sc := webhookScenario(t, h.URL, "",
		`.state.reporters[0].delivered == 0`,
		`.state.reporters[0].failed == (.state.events | length)`,
	)
	sc = strings.Replace(sc, `"type":"webhook"`, `"type":"webhook","retry_window_s":2`, 1)
	if !strings.Contains(sc, `"retry_window_s":2`) {
		t.Fatalf("could not set the retry window in %s", sc)
	}
	start := time.Now()
	loaded := writeScenario(t, sc)
	out, st := play(t, s.c, loaded, 2*time.Minute)
	checkExpect(t, loaded, out)
	t.Logf("the run took %s; %d requests for %d events; reporters: %+v", time.Since(start).Round(time.Millisecond), len(h.requests()), len(st.Events), st.Reporters)
	if len(h.requests()) <= len(st.Events) {
		t.Errorf("%d requests for %d events: the failing deliveries were not retried", len(h.requests()), len(st.Events))
	}
}
