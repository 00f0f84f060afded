package testsuite

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"google.golang.org/protobuf/proto"

	"github.com/todoflow/todoflow/scenario"
	"github.com/todoflow/todoflow/worker/agentworker"
	"github.com/todoflow/todoflow/worker/codec"
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
	w, err := agentworker.New(c, agentworker.Options{StateDir: t.TempDir()})
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
