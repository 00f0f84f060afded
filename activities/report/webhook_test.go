package report

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"
)

// loopback lets webhooks reach the test servers, which listen on loopback.
const loopback = "127.0.0.0/8, ::1"

func TestWebhookEnv(t *testing.T) {
	for name, want := range map[string][2]string{
		"ops":       {"TODOFLOW_WEBHOOK_HEADERS_OPS", "TODOFLOW_WEBHOOK_URLS_OPS"},
		"my-hook":   {"TODOFLOW_WEBHOOK_HEADERS_MY_HOOK", "TODOFLOW_WEBHOOK_URLS_MY_HOOK"},
		"Team.A v2": {"TODOFLOW_WEBHOOK_HEADERS_TEAM_A_V2", "TODOFLOW_WEBHOOK_URLS_TEAM_A_V2"},
	} {
		if got := WebhookHeadersEnv(name); got != want[0] {
			t.Errorf("WebhookHeadersEnv(%q) = %q, want %q", name, got, want[0])
		}
		if got := WebhookURLsEnv(name); got != want[1] {
			t.Errorf("WebhookURLsEnv(%q) = %q, want %q", name, got, want[1])
		}
	}
}

// hookRequest is what the test webhook received.
type hookRequest struct {
	header http.Header
	body   []byte
}

// testHook is a webhook receiver that records every request and answers
// with answer.
type testHook struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []hookRequest
}

func newTestHook(t *testing.T, answer http.HandlerFunc) *testHook {
	t.Helper()
	h := &testHook{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.reqs = append(h.reqs, hookRequest{header: r.Header.Clone(), body: body})
		h.mu.Unlock()
		answer(w, r)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *testHook) requests() []hookRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hookRequest(nil), h.reqs...)
}

// webhookInput is a report of testEvent to a webhook reporter with this config.
func webhookInput(t *testing.T, config map[string]string) input {
	t.Helper()
	cfg, err := json.Marshal(config)
	if err != nil {
		t.Fatal(err)
	}
	return input{
		Reporter:   api.ReporterConfig{Type: api.ReporterWebhook, Config: cfg},
		WorkflowID: "wf-1/researcher", AgentID: "researcher",
		Event: json.RawMessage(testEvent), Plan: json.RawMessage(testPlan),
	}
}

func TestReportWebhook(t *testing.T) {
	const secret = "Bearer s3cret-t0ken"
	t.Setenv("TODOFLOW_WEBHOOK_HEADERS_OPS_HOOK", `{"Authorization": "`+secret+`", "X-Team": "platform"}`)
	t.Setenv(WebhookAllowNetsEnv, loopback)

	tests := []struct {
		name    string
		headers string // the config's "headers"; "" for none
		status  int
		answer  string
		retry   string // Retry-After
		closed  bool   // the server is gone

		errType      string // "" when delivered
		nonRetryable bool
		delay        time.Duration
		wantErr      []string
	}{
		{name: "delivered", headers: "ops-hook", status: http.StatusOK},
		{name: "delivered 204 without headers", status: http.StatusNoContent},
		{name: "503 with Retry-After", headers: "ops-hook", status: http.StatusServiceUnavailable, retry: "7",
			errType: ErrTypeRetryable, delay: 7 * time.Second, wantErr: []string{"503"}},
		{name: "503 quoting the token alone", headers: "ops-hook", status: http.StatusServiceUnavailable, answer: "token s3cret-t0ken is not valid yet",
			errType: ErrTypeRetryable, wantErr: []string{"503 Service Unavailable"}},
		{name: "500 with a body", status: http.StatusInternalServerError, answer: "SECRET-ECHO",
			errType: ErrTypeRetryable, wantErr: []string{"500 Internal Server Error"}},
		{name: "429", status: http.StatusTooManyRequests,
			errType: ErrTypeRetryable, wantErr: []string{"429"}},
		{name: "408", status: http.StatusRequestTimeout,
			errType: ErrTypeRetryable, wantErr: []string{"408"}},
		{name: "400", headers: "ops-hook", status: http.StatusBadRequest, answer: "bad event; you sent Authorization: " + secret,
			errType: ErrTypeRejected, nonRetryable: true, wantErr: []string{"400 Bad Request"}},
		{name: "401", status: http.StatusUnauthorized,
			errType: ErrTypeRejected, nonRetryable: true, wantErr: []string{"401"}},
		{name: "redirect is not followed", status: http.StatusFound,
			errType: ErrTypeRejected, nonRetryable: true, wantErr: []string{"302"}},
		{name: "closed server", closed: true,
			errType: ErrTypeRetryable},
		{name: "missing headers variable", headers: "nope",
			errType: ErrTypeConfig, nonRetryable: true, wantErr: []string{"TODOFLOW_WEBHOOK_HEADERS_NOPE"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newTestHook(t, func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost {
					w.WriteHeader(http.StatusMethodNotAllowed)
					return
				}
				if tt.retry != "" {
					w.Header().Set("Retry-After", tt.retry)
				}
				if tt.status == http.StatusFound {
					w.Header().Set("Location", "/elsewhere")
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.answer)
			})
			t.Setenv(WebhookURLsEnv("ops-hook"), h.URL+"/plans")
			if tt.closed {
				h.Close()
			}
			config := map[string]string{"url": h.URL + "/plans?token=abc"}
			if tt.headers != "" {
				config["headers"] = tt.headers
			}
			err := deliver(t, t.TempDir(), webhookInput(t, config), nil)

			if tt.errType == "" {
				if err != nil {
					t.Fatal(err)
				}
			} else {
				appErr := wantAppErr(t, err, tt.errType, tt.nonRetryable)
				if got := appErr.NextRetryDelay(); got != tt.delay {
					t.Errorf("next retry delay %v, want %v", got, tt.delay)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(appErr.Error(), w) {
						t.Errorf("error %q does not contain %q", appErr.Error(), w)
					}
				}
				// The error goes to history: nothing of the answer's
				// body, which may quote anything, is in it.
				for _, leak := range []string{"s3cret", "SECRET-ECHO", "not valid yet", "bad event", "token=abc"} {
					if strings.Contains(appErr.Error(), leak) {
						t.Errorf("error %q shows %q", appErr.Error(), leak)
					}
				}
			}
			reqs := h.requests()
			if tt.closed || tt.errType == ErrTypeConfig {
				if len(reqs) != 0 {
					t.Fatalf("got %d requests, want none", len(reqs))
				}
				return
			}
			if len(reqs) != 1 {
				t.Fatalf("got %d requests, want 1 (no retry by the HTTP client, no redirect followed)", len(reqs))
			}
			req := reqs[0]
			if ct := req.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if key := req.header.Get("Idempotency-Key"); key != "wf-1/researcher/researcher/7" {
				t.Errorf("Idempotency-Key %q", key)
			}
			wantAuth, wantTeam := "", ""
			if tt.headers != "" {
				wantAuth, wantTeam = secret, "platform"
			}
			if got := req.header.Get("Authorization"); got != wantAuth {
				t.Errorf("Authorization %q, want %q", got, wantAuth)
			}
			if got := req.header.Get("X-Team"); got != wantTeam {
				t.Errorf("X-Team %q, want %q", got, wantTeam)
			}
			var body struct {
				WorkflowID string          `json:"workflow_id"`
				AgentID    string          `json:"agent_id"`
				Event      json.RawMessage `json:"event"`
				Plan       json.RawMessage `json:"plan"`
			}
			if err := json.Unmarshal(req.body, &body); err != nil {
				t.Fatalf("body %q: %v", req.body, err)
			}
			if body.WorkflowID != "wf-1/researcher" || body.AgentID != "researcher" {
				t.Errorf("body workflow %q agent %q", body.WorkflowID, body.AgentID)
			}
			if !jsonEqual(t, body.Event, testEvent) || !jsonEqual(t, body.Plan, testPlan) {
				t.Errorf("body %s does not carry the event and the plan", req.body)
			}
		})
	}
}

// TestReportWebhookRefused: the deliveries the worker refuses never reach
// the receiver (its credentials least of all), and fail at once, not
// retryable, with an error that says which setting decides.
func TestReportWebhookRefused(t *testing.T) {
	const secret = "Bearer s3cret-t0ken"
	t.Setenv(WebhookHeadersEnv("ops"), `{"Authorization": "`+secret+`"}`)

	tests := []struct {
		name    string
		url     string // {hook}: the test receiver's http://127.0.0.1:port
		headers string
		allow   string // TODOFLOW_WEBHOOK_ALLOW_NETS
		urls    string // TODOFLOW_WEBHOOK_URLS_OPS, {hook} as in url

		errType string
		wantErr []string
	}{
		{name: "loopback without the allow setting", url: "{hook}/plans", allow: unset,
			errType: ErrTypeForbidden, wantErr: []string{"127.0.0.1 is loopback", WebhookAllowNetsEnv}},
		{name: "loopback with headers bound to it, without the allow setting", url: "{hook}/plans", headers: "ops", allow: "", urls: "{hook}",
			errType: ErrTypeForbidden, wantErr: []string{"is loopback", WebhookAllowNetsEnv}},
		{name: "loopback, other networks allowed", url: "{hook}/plans", allow: "10.0.0.0/8 192.168.1.7",
			errType: ErrTypeForbidden, wantErr: []string{"127.0.0.1 is loopback"}},
		// The check is on the address dialled, not on the URL's text.
		{name: "a name that resolves to loopback", url: "{localhost}/plans", allow: unset,
			errType: ErrTypeForbidden, wantErr: []string{"is loopback", WebhookAllowNetsEnv}},
		{name: "cloud metadata", url: "http://169.254.169.254/latest/meta-data/", allow: loopback,
			errType: ErrTypeForbidden, wantErr: []string{"169.254.169.254 is link-local"}},
		{name: "cloud metadata through NAT64", url: "http://[64:ff9b::a9fe:a9fe]/latest/meta-data/", allow: loopback,
			errType: ErrTypeForbidden, wantErr: []string{"a way to 169.254.169.254, which is link-local"}},
		{name: "headers outside their binding", url: "{hook}/plans", headers: "ops", allow: loopback, urls: "https://hooks.example.com/ops",
			errType: ErrTypeForbidden, wantErr: []string{`headers "ops" are not sent to http://127.0.0.1:`, "TODOFLOW_WEBHOOK_URLS_OPS does not cover"}},
		{name: "headers bound to another path", url: "{hook}/plans", headers: "ops", allow: loopback, urls: "{hook}/ops",
			errType: ErrTypeForbidden, wantErr: []string{"TODOFLOW_WEBHOOK_URLS_OPS does not cover"}},
		{name: "dot segments out of the binding", url: "{hook}/ops/../admin", headers: "ops", allow: loopback, urls: "{hook}/ops",
			errType: ErrTypeForbidden, wantErr: []string{"TODOFLOW_WEBHOOK_URLS_OPS does not cover"}},
		{name: "headers bound to the same host over https", url: "{hook}/plans", headers: "ops", allow: loopback, urls: "{hook-https}",
			errType: ErrTypeForbidden, wantErr: []string{"TODOFLOW_WEBHOOK_URLS_OPS does not cover"}},
		{name: "headers bound to nothing", url: "{hook}/plans", headers: "ops", allow: loopback, urls: unset,
			errType: ErrTypeConfig, wantErr: []string{`headers "ops" are bound to no URL`, "has no TODOFLOW_WEBHOOK_URLS_OPS"}},
		{name: "headers bound to an empty list", url: "{hook}/plans", headers: "ops", allow: loopback, urls: " , ",
			errType: ErrTypeConfig, wantErr: []string{"TODOFLOW_WEBHOOK_URLS_OPS is empty"}},
		{name: "a binding entry with credentials", url: "{hook}/plans", headers: "ops", allow: loopback, urls: "{hook}, https://u:pw-pw-pw@example.com/",
			errType: ErrTypeConfig, wantErr: []string{"TODOFLOW_WEBHOOK_URLS_OPS: entry 2 is not an http or https URL"}},
		{name: "a bad allow setting", url: "{hook}/plans", allow: "127.0.0.1, localhost",
			errType: ErrTypeConfig, wantErr: []string{WebhookAllowNetsEnv, `"localhost" is neither a CIDR prefix`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newTestHook(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
			u, _ := url.Parse(h.URL)
			expand := strings.NewReplacer("{hook}", h.URL, "{hook-https}", "https://"+u.Host,
				"{localhost}", "http://localhost:"+u.Port()).Replace
			setenv(t, WebhookAllowNetsEnv, tt.allow)
			setenv(t, WebhookURLsEnv("ops"), expand(tt.urls))
			config := map[string]string{"url": expand(tt.url)}
			if tt.headers != "" {
				config["headers"] = tt.headers
			}
			err := deliver(t, t.TempDir(), webhookInput(t, config), nil)
			appErr := wantAppErr(t, err, tt.errType, true)
			for _, w := range tt.wantErr {
				if !strings.Contains(appErr.Error(), w) {
					t.Errorf("error %q does not contain %q", appErr.Error(), w)
				}
			}
			if strings.Contains(appErr.Error(), "s3cret") || strings.Contains(appErr.Error(), "pw-pw-pw") {
				t.Errorf("error %q shows a secret", appErr.Error())
			}
			if reqs := h.requests(); len(reqs) != 0 {
				t.Errorf("the receiver got %d requests (Authorization %q), want none", len(reqs), reqs[0].header.Get("Authorization"))
			}
		})
	}
}

// unset, as a value for setenv, leaves the variable out of the environment.
const unset = "<unset>"

// setenv sets the variable for the test, or unsets it.
func setenv(t *testing.T, name, value string) {
	t.Helper()
	if value != unset {
		t.Setenv(name, value)
		return
	}
	t.Setenv(name, "") // restores the variable after the test
	os.Unsetenv(name)
}

func TestWebhookBindingCovers(t *testing.T) {
	tests := []struct {
		binding string
		url     string
		want    bool
	}{
		{"https://hooks.example.com", "https://hooks.example.com/any/path?q=1", true},
		{"https://hooks.example.com/", "https://hooks.example.com", true},
		{"https://hooks.example.com/ops", "https://hooks.example.com/ops", true},
		{"https://hooks.example.com/ops", "https://hooks.example.com/ops/plans", true},
		{"https://hooks.example.com/ops/", "https://hooks.example.com/ops/plans", true},
		{"https://hooks.example.com/ops/", "https://hooks.example.com/ops", true},
		{"https://hooks.example.com/ops", "https://hooks.example.com/opsx", false},
		{"https://hooks.example.com/ops", "https://hooks.example.com/ops/../admin", false},
		{"https://hooks.example.com/ops", "https://hooks.example.com/ops/%2e%2e/admin", false},
		{"https://hooks.example.com/ops", "https://hooks.example.com/", false},
		{"https://HOOKS.example.com.", "https://hooks.EXAMPLE.com/p", true},
		{"https://hooks.example.com", "https://hooks.example.com:443/p", true},
		{"https://hooks.example.com", "https://hooks.example.com:8443/p", false},
		{"https://hooks.example.com", "http://hooks.example.com/p", false},
		{"https://hooks.example.com", "https://hooks.example.com.evil.test/p", false},
		{"https://hooks.example.com", "https://evil.test/hooks.example.com", false},
		{"https://example.com", "https://hooks.example.com/", false},
		{"http://127.0.0.1:8080", "http://[::ffff:127.0.0.1]:8080/p", true},
		{"http://[::1]:8080/p", "http://[0:0::1]:8080/p/q", true},
		{"https://a.example https://b.example/x", "https://b.example/x/y", true},
		{"https://a.example,https://b.example/x", "https://b.example/y", false},
	}
	for _, tt := range tests {
		t.Run(tt.binding+" "+tt.url, func(t *testing.T) {
			t.Setenv(WebhookURLsEnv("t"), tt.binding)
			b, err := readWebhookBinding("t")
			if err != nil {
				t.Fatal(err)
			}
			u, err := url.Parse(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			if got := b.covers(u); got != tt.want {
				t.Errorf("%s covers %s: %v, want %v", tt.binding, tt.url, got, tt.want)
			}
		})
	}
}

func jsonEqual(t *testing.T, got json.RawMessage, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		return false
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	return string(gb) == string(wb)
}

func TestRetryAfterDelay(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tt := range []struct {
		v    string
		want time.Duration
	}{
		{"", 0},
		{"7", 7 * time.Second},
		{"1.5", 1500 * time.Millisecond},
		{"0", 0},
		{"-3", 0},
		{"soon", 0},
		{"99999999999", maxRetryAfter},
		{now.Add(30 * time.Second).Format(http.TimeFormat), 30 * time.Second},
		{now.Add(-30 * time.Second).Format(http.TimeFormat), 0},
	} {
		if got := retryAfterDelay(tt.v, now); got != tt.want {
			t.Errorf("retryAfterDelay(%q) = %v, want %v", tt.v, got, tt.want)
		}
	}
}
