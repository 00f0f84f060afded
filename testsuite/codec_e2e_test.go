package testsuite

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"google.golang.org/protobuf/proto"

	"github.com/todoflow/todoflow/scenario"
	"github.com/todoflow/todoflow/worker/agentworker"
	"github.com/todoflow/todoflow/worker/codec"
	"github.com/todoflow/todoflow/worker/devserver"
)

// With TODOFLOW_PAYLOAD_KEY set on the worker and the client, nothing of a
// prompt, a todo item, a tool's arguments or result, or a reply is readable
// in the exported history: payloads, failure messages, summaries and search
// attributes included. The client with the key reads the run as usual.
func TestEncryptedHistoryEndToEnd(t *testing.T) {
	s := startServer(t)
	t.Setenv(codec.EnvKey, base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef")))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, _, err := agentworker.Dial(ctx, s.srv.Address(), s.srv.Namespace(), true, quiet{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w, err := agentworker.New(c, agentworker.Options{ScriptDir: "/", StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	secrets := []string{"prompt-SECRET-1", "item-SECRET-2", "file-SECRET-3", "reply-SECRET-4", "missing-SECRET-5"}
	sc := writeScenario(t, `{"name": "sealed", "input": {"prompt": "Do `+secrets[0]+`"},
	  "model": [
	    {"tool_calls": [{"name": "write_todos", "arguments": {"todos": [{"content": "`+secrets[1]+`", "status": "in_progress"}]}}]},
	    {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "`+secrets[2]+`"}},
	                    {"name": "read_file", "arguments": {"path": "`+secrets[4]+`.txt"}}]},
	    {"tool_calls": [{"name": "write_todos", "arguments": {"todos": [{"content": "`+secrets[1]+`", "status": "completed"}]}}]},
	    {"content": "`+secrets[3]+`"}
	  ]}`)
	out, err := scenario.Play(ctx, c, sc, scenario.Options{Progress: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	st := decodeState(t, out)
	if len(st.Todos) != 1 || st.Todos[0].Content != secrets[1] {
		t.Errorf("the client with the key reads todos %+v", st.Todos)
	}

	it := s.c.GetWorkflowHistory(ctx, out.WorkflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var exported strings.Builder
	events := 0
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		// The wire form: a payload's data is its bytes here, where JSON
		// would show them in base64.
		b, _ := proto.Marshal(ev)
		exported.Write(b)
		events++
	}
	for _, secret := range secrets {
		if strings.Contains(exported.String(), secret) {
			t.Errorf("%q is readable in the exported history (%d events)", secret, events)
		}
	}
	// And the history is there: the encrypted payloads say so.
	if !strings.Contains(exported.String(), codec.Encoding) {
		t.Errorf("no payload of the exported history is marked %s", codec.Encoding)
	}
	d, err := s.c.DescribeWorkflowExecution(ctx, out.WorkflowID, "")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := proto.Marshal(d); strings.Contains(string(b), "SECRET") {
		t.Error("the run's description (search attributes, details) shows a secret")
	}
	// The static summary and details (the prompt, the model) are sealed like the rest: the
	// server holds them encrypted, the client with the key reads them.
	meta := d.GetExecutionConfig().GetUserMetadata()
	for name, p := range map[string]*commonpb.Payload{"summary": meta.GetSummary(), "details": meta.GetDetails()} {
		if enc := string(p.GetMetadata()["encoding"]); enc != codec.Encoding {
			t.Errorf("the server holds the static %s as %q; want it %s", name, enc, codec.Encoding)
		}
	}
	desc, err := c.DescribeWorkflow(ctx, out.WorkflowID, "")
	if err != nil {
		t.Fatal(err)
	}
	if summary, err := desc.GetStaticSummary(); err != nil || summary != "Do "+secrets[0] {
		t.Errorf("the client with the key reads the static summary %q, %v", summary, err)
	}
}

// The worker binary's codec server decodes a run's history for the
// temporal CLI that sends its token (`--codec-auth`), and for no other.
func TestCodecServerEndToEnd(t *testing.T) {
	s := startServer(t)
	bin := buildWorker(t)
	token := "codec-token-0123456789abcdef"
	t.Setenv(codec.EnvKey, base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef")))
	t.Setenv(codec.EnvOldKeys, "")
	t.Setenv(codec.EnvToken, token)
	w := startWorkerProc(t, bin, s, "worker", "--codec-addr", "127.0.0.1:0")
	endpoint := w.logged(t, "worker: codec server at ")
	if !strings.HasPrefix(endpoint, "http://127.0.0.1:") {
		t.Fatalf("codec server at %q, want a loopback address", endpoint)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, _, err := agentworker.Dial(ctx, s.srv.Address(), s.srv.Namespace(), true, quiet{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	secret := "prompt-SECRET-codec"
	out, err := scenario.Play(ctx, c, writeScenario(t, `{"name": "decoded", "input": {"prompt": "`+secret+`"},
	  "model": [{"content": "done"}]}`), scenario.Options{Progress: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}

	cli, err := devserver.BinaryPath(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	show := func(flags ...string) (string, error) {
		args := append([]string{"workflow", "show", "--address", s.srv.Address(), "--namespace", s.srv.Namespace(),
			"--workflow-id", out.WorkflowID, "--output", "json", "--codec-endpoint", endpoint}, flags...)
		cmd := exec.CommandContext(ctx, cli, args...)
		cmd.Env = append(os.Environ(), "TEMPORAL_ADDRESS=", "TEMPORAL_NAMESPACE=", "TEMPORAL_CODEC_AUTH=", "TEMPORAL_CODEC_ENDPOINT=")
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	got, err := show("--codec-auth", "Bearer "+token)
	if err != nil || !strings.Contains(payloadData(got), secret) {
		t.Errorf("temporal workflow show --codec-auth 'Bearer <token>' does not show the prompt (%v):\n%s", err, got)
	}
	if sealed := base64.StdEncoding.EncodeToString([]byte(codec.Encoding)); strings.Contains(got, sealed) {
		t.Errorf("temporal workflow show --codec-auth 'Bearer <token>' left payloads %s:\n%s", codec.Encoding, got)
	}
	// The CLI retries a refused decode until its deadline: a short one.
	for name, flags := range map[string][]string{
		"no token":      nil,
		"a wrong token": {"--codec-auth", "Bearer " + token + "-wrong"},
	} {
		got, err := show(append(flags, "--command-timeout", "3s")...)
		if err == nil || strings.Contains(payloadData(got), secret) {
			t.Errorf("temporal workflow show with %s: %v, want an error and no prompt; output:\n%s", name, err, got)
		}
	}
	resp, err := http.Post(endpoint+"/decode", "application/json", strings.NewReader(`{"payloads": []}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer ") {
		t.Errorf("POST /decode without a token: %s, WWW-Authenticate %q; want 401 and a Bearer challenge", resp.Status, resp.Header.Get("WWW-Authenticate"))
	}
}

// A worker asked to serve the codec server on every interface without a
// token refuses to start, as a usage error (exit code 2) that names the
// flag and the variable.
func TestCodecServerRefusesOpenAddress(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the worker binary; skipped with -short")
	}
	bin := buildWorker(t)
	cmd := exec.Command(bin, "--codec-addr", "0.0.0.0:0", "--codec-insecure-loopback")
	cmd.Env = append(os.Environ(), codec.EnvKey+"="+base64.StdEncoding.EncodeToString(make([]byte, 32)), codec.EnvOldKeys+"=", codec.EnvToken+"=",
		"TODOFLOW_METRICS_ADDR=", "OTEL_EXPORTER_OTLP_ENDPOINT=", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=", "TODOFLOW_STATE_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("worker --codec-addr 0.0.0.0:0 without a token: %v, want exit code 2; output:\n%s", err, out)
	}
	for _, want := range []string{"--codec-addr", codec.EnvToken, "not a loopback address"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the refusal does not name %q:\n%s", want, out)
		}
	}
}

// payloadData is the data of every payload in a JSON history, decoded from
// base64 (where the CLI shows it), one per line.
func payloadData(history string) string {
	var all strings.Builder
	for _, m := range regexp.MustCompile(`"data":\s*"([A-Za-z0-9+/=]*)"`).FindAllStringSubmatch(history, -1) {
		b, _ := base64.StdEncoding.DecodeString(m[1])
		all.Write(b)
		all.WriteByte('\n')
	}
	return all.String()
}
