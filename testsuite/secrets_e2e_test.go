package testsuite

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/activities/report"
	"github.com/todoflow/todoflow/api"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	enumspb "go.temporal.io/api/enums/v1"
	"google.golang.org/protobuf/proto"

	"github.com/todoflow/todoflow/scenario"
	"github.com/todoflow/todoflow/todo"
)

// Environment of the "vault" MCP server (see TestMain): its secret, which
// the worker's configuration fills in from the worker's environment, and a
// file where it writes the secret it was given, for the test to see that it
// arrived, and beside it (vaultLeakSuffix) the worker's secrets it was not
// given but could see.
const (
	vaultTokenEnv   = "VAULT_TOKEN"
	vaultSeenEnv    = "E2E_VAULT_SEEN"
	vaultLeakSuffix = ".leaked"
)

// workerOnlyEnv are variables of the worker's environment that no MCP
// server is given.
var workerOnlyEnv = []string{"OPENAI_API_KEY", "TODOFLOW_WEBHOOK_HEADERS_VAULT_HOOK", "E2E_VAULT_SECRET"}

// runVaultServer is the stdio MCP server "vault". Its tool open_vault
// fails on its first call with an error that quotes its token, as a server
// passing on an upstream service's refusal would, and succeeds after.
func runVaultServer(ctx context.Context) error {
	token, seen := os.Getenv(vaultTokenEnv), os.Getenv(vaultSeenEnv)
	s := sdk.NewServer(&sdk.Implementation{Name: "vault", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "open_vault", Description: "Open the vault."}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		_, err := os.Stat(seen)
		first := errors.Is(err, os.ErrNotExist)
		if err := os.WriteFile(seen, []byte(token), 0o600); err != nil {
			return nil, nil, err
		}
		var leaked []string
		for _, name := range workerOnlyEnv {
			if v, ok := os.LookupEnv(name); ok {
				leaked = append(leaked, name+"="+v)
			}
		}
		if err := os.WriteFile(seen+vaultLeakSuffix, []byte(strings.Join(leaked, "\n")), 0o600); err != nil {
			return nil, nil, err
		}
		if first {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{
				Text: "upstream refused the vault token " + token + ": not yet valid"}}}, nil, nil
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("vault opened with a token of %d bytes", len(token))}}}, nil, nil
	})
	return s.Run(ctx, &sdk.StdioTransport{})
}

// TestSecretsStayOutOfHistory runs a session with the three secrets a worker
// holds in its environment, each used where it belongs, and each quoted
// back by the service it was sent to, the way services quote a credential
// they refuse: the model endpoint's API key (OPENAI_API_KEY, through the
// real openai-go client; the endpoint's first answer is a 500 that quotes
// it), a webhook reporter's header (TODOFLOW_WEBHOOK_HEADERS_<NAME>; the
// webhook's first answer is a 503 that quotes it) and an MCP server's
// secret (its env, filled in from ${NAME}; its tool's first answer is an
// error that quotes it). The exported history must hold none of them, in
// plain text or in the base64 that JSON gives a payload's bytes.
//
// It could fail: each secret is shown to have reached its service, the
// services' refusals are shown to be in the history (the model's and the
// MCP tool's in their redacted form, the webhook's by its status only),
// and the search is shown to find the run's prompt, which the history
// holds in base64 only. The MCP server is shown to have seen none of the
// worker's other secrets.
//
// Not parallel: t.Setenv, read by the in-process worker.
func TestSecretsStayOutOfHistory(t *testing.T) {
	secrets := map[string]string{
		"OPENAI_API_KEY": "e2e-openai-KEY-9f3k2j1h7q",
		"webhook header": "e2e-hook-TOKEN-4m8n2b6v0p",
		"MCP env":        "e2e-mcp-SECRET-7c5x1z3w8r",
	}
	stub := newModelStub(t,
		toolCalls(t, [3]string{"c1", "createPlan", `{"title":"Open the vault","steps":["Open the vault","Report"]}`}),
		toolCalls(t, [3]string{"c2", "startPlan", `{}`}),
		toolCalls(t, [3]string{"c3", "mcp__vault__open_vault", `{}`}),
		toolCalls(t, [3]string{"c4", "mcp__vault__open_vault", `{}`}),
		toolCalls(t, [3]string{"c5", "setStepStatus", `{"step_id":"step_1","status":"completed","result":"Opened"}`}),
		toolCalls(t, [3]string{"c6", "setStepStatus", `{"step_id":"step_2","status":"completed","result":"Reported"}`}),
		toolCalls(t, [3]string{"c7", "completePlan", `{"status":"completed"}`}),
		assistantText("The vault is open."),
	)
	stub.failNext(1, http.StatusInternalServerError,
		`{"error":{"message":"internal error while checking key `+secrets["OPENAI_API_KEY"]+`","type":"server_error"}}`)
	h := newHook(t, func(n int) (int, string) {
		if n == 1 {
			return http.StatusServiceUnavailable, "1"
		}
		return http.StatusOK, ""
	})
	h.echo = func(r *http.Request) string {
		return "bearer token " + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") + " is not accepted yet"
	}

	t.Setenv("OPENAI_BASE_URL", stub.baseURL())
	t.Setenv("OPENAI_API_KEY", secrets["OPENAI_API_KEY"])
	t.Setenv(report.WebhookHeadersEnv("vault-hook"), `{"Authorization": "Bearer `+secrets["webhook header"]+`"}`)
	t.Setenv(report.WebhookURLsEnv("vault-hook"), h.URL)
	t.Setenv("E2E_VAULT_SECRET", secrets["MCP env"])
	dir := t.TempDir()
	seen := filepath.Join(dir, "vault-seen")
	s := startServer(t)
	s.startMCPWorker(t, map[string]any{"mcpServers": map[string]any{"vault": map[string]any{
		"command": os.Args[0],
		"env":     map[string]string{mcpServerEnv: "vault", vaultTokenEnv: "${E2E_VAULT_SECRET}", vaultSeenEnv: seen},
	}}})

	const prompt = "Open the vault and report."
	sc := &scenario.Scenario{Name: "secrets", Input: api.AgentInput{
		Prompt: prompt, Model: "openai:test-model",
		Todo:      todo.Config{PlanApproval: todo.ApprovalAuto},
		Reporters: []api.ReporterConfig{{Type: "webhook", Config: []byte(`{"url": "` + h.URL + `", "headers": "vault-hook"}`)}},
	}}
	out, st := play(t, s.c, sc, 2*time.Minute)
	if out.RunStatus != "completed" || out.Reply != "The vault is open." {
		t.Fatalf("run %s, reply %q, error %s", out.RunStatus, out.Reply, out.Error)
	}

	// Each secret reached its service.
	reqs := stub.requests()
	if len(reqs) == 0 || reqs[0].header.Get("Authorization") != "Bearer "+secrets["OPENAI_API_KEY"] {
		t.Errorf("the model endpoint was not sent the key")
	}
	hooked := h.requests()
	if len(hooked) < 2 || hooked[0].Authorization != "Bearer "+secrets["webhook header"] {
		t.Errorf("the webhook was not sent its header (%d requests)", len(hooked))
	}
	if got, err := os.ReadFile(seen); err != nil || string(got) != secrets["MCP env"] {
		t.Errorf("the MCP server had %q in its environment (%v), want the worker's secret", got, err)
	}
	if got, err := os.ReadFile(seen + vaultLeakSuffix); err != nil || len(got) != 0 {
		t.Errorf("the MCP server saw the worker's %q (%v), want none of %q", got, err, workerOnlyEnv)
	}
	if len(st.Reporters) != 1 || st.Reporters[0].Delivered != len(st.Events) || len(st.Events) == 0 {
		t.Errorf("reporters %+v for %d events", st.Reporters, len(st.Events))
	}

	// The history: as `starter history` exports it (JSON, where a
	// payload's bytes are base64), and in the wire form, where they are
	// as they are.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	exported, events, err := scenario.History(ctx, s.c, out.WorkflowID, "")
	if err != nil {
		t.Fatal(err)
	}
	var wire bytes.Buffer
	it := s.c.GetWorkflowHistory(ctx, out.WorkflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := proto.Marshal(ev)
		wire.Write(b)
	}
	d, err := s.c.DescribeWorkflowExecution(ctx, out.WorkflowID, "")
	if err != nil {
		t.Fatal(err)
	}
	described, _ := proto.Marshal(d)
	for name, secret := range secrets {
		for where, data := range map[string][]byte{"exported history": exported, "history (wire form)": wire.Bytes(), "run's description": described} {
			if forms := findSecret(data, secret); len(forms) > 0 {
				t.Errorf("the %s of %s (%d events) holds the %s secret as %s", where, out.WorkflowID, events, name, strings.Join(forms, ", "))
			}
		}
	}

	// The search finds what is there: the prompt, in base64 only; and the
	// services' refusals reached the history (so their quotes were
	// redacted, not lost), the webhook's without its body.
	if forms := findSecret(exported, prompt); len(forms) == 0 || forms[0] == "plain text" {
		t.Errorf("the search found the prompt in the exported history as %v; want it in base64 only", forms)
	}
	for what, text := range map[string]string{
		"the model endpoint's 500":   "internal error while checking key",
		"the webhook's 503":          "503 Service Unavailable",
		"the MCP tool's first error": "upstream refused the vault token",
	} {
		if len(findSecret(exported, text)) == 0 {
			t.Errorf("%s (%q) is not in the history: the test did not show it was redacted", what, text)
		}
	}
	if forms := findSecret(exported, "is not accepted yet"); len(forms) > 0 {
		t.Errorf("the webhook's answer body is in the history (as %s): only its status belongs there", strings.Join(forms, ", "))
	}
}

// findSecret says in which forms secret occurs in data: as plain text, or
// inside any base64 text (standard or URL alphabet) at any of the three
// alignments a secret can have in the bytes being encoded.
func findSecret(data []byte, secret string) []string {
	var forms []string
	if bytes.Contains(data, []byte(secret)) {
		forms = append(forms, "plain text")
	}
	for offset := range 3 {
		enc := base64.StdEncoding.EncodeToString(append(make([]byte, offset), secret...))
		// Keep the characters whose six bits all come from the secret.
		first := (8*offset + 5) / 6
		last := 8 * (offset + len(secret)) / 6
		core := enc[first:last]
		if len(core) < 8 {
			continue
		}
		for _, alphabet := range []string{core, strings.NewReplacer("+", "-", "/", "_").Replace(core)} {
			if bytes.Contains(data, []byte(alphabet)) {
				forms = append(forms, fmt.Sprintf("base64 (offset %d)", offset))
				break
			}
		}
	}
	return forms
}

// TestFindSecret checks the search the secrets test relies on.
func TestFindSecret(t *testing.T) {
	secret := "e2e-secret-value-123"
	for _, tc := range []struct {
		name string
		data []byte
		want bool
	}{
		{"plain", []byte(`{"message":"key e2e-secret-value-123 refused"}`), true},
		{"absent", []byte(`{"message":"key [redacted] refused"}`), false},
		{"a prefix only", []byte("e2e-secret-value-12"), false},
	} {
		if got := len(findSecret(tc.data, secret)) > 0; got != tc.want {
			t.Errorf("%s: found %v, want %v", tc.name, got, tc.want)
		}
	}
	for offset := range 3 {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			payload := append([]byte(strings.Repeat("x", offset)+`{"text":"`), secret...)
			payload = append(payload, `"} and more`...)
			data := []byte(`{"data":"` + enc.EncodeToString(payload) + `"}`)
			if len(findSecret(data, secret)) == 0 {
				t.Errorf("a payload with the secret at offset %d, in %v base64, was not found", offset+9, enc == base64.URLEncoding)
			}
		}
	}
}
