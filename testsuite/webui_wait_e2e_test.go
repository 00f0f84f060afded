//go:build unix

package testsuite

import (
	"context"
	"fmt"
	"github.com/todoflow/todoflow/api"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/converter"

	tfclient "github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/todo"
)

// fraction is a count written as digits around a slash, which the Web UI's
// font may draw as one fraction glyph.
var fraction = regexp.MustCompile(`[0-9]/[0-9]`)

// TestWebUIShowsTheWaitOfAContinuedRun opens, in a headless chromium, the
// page of a session that continued as new while a write_file call waited
// for approval, as an operator would: its current details start with the
// headline, which names the waiting call's tool and an argument, and the
// continued run, which has no static summary (the SDK gives a continued run
// no user metadata), keeps the session's summary in its memo.
func TestWebUIShowsTheWaitOfAContinuedRun(t *testing.T) {
	browser := chromium(t)
	if testing.Short() {
		t.Skip("end-to-end test against a real Temporal server; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	// A server that suggests continuing as new early, so that the wait is
	// handed over (see awaitHandedOverApproval).
	srv, c := startWebUIServer(ctx, t, "limit.historyCount.suggestContinueAsNew=20")

	sc := writeScenario(t, `{"name": "release notes file", "input": {"prompt": "Write the release notes\nto notes.md.", "todo": {"enabled": false}},
	  "model": [{"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.md", "content": "v0.3"}}]}, {"content": "Wrote notes.md."}]}`)
	in := sc.RunInput()
	in.Approval = todo.ToolApproval{"write_file": todo.ApprovalRequired}
	const id = "notes-waiting"
	sess, err := tfclient.New(c, tfclient.Options{}).Start(ctx, in, tfclient.StartOptions{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	awaitHandedOverApproval(ctx, t, c, sess, id)

	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		t.Fatal(err)
	}
	info := d.GetWorkflowExecutionInfo()
	var memo string
	if f := info.GetMemo().GetFields()[api.MemoSummary]; f == nil || converter.GetDefaultDataConverter().FromPayload(f, &memo) != nil {
		t.Errorf("the continued run's memo has no %q: %v", api.MemoSummary, info.GetMemo())
	}
	if summary, _ := api.Describe(in); memo != summary {
		t.Errorf("the continued run's memo summary is %q, want the session's %q", memo, summary)
	}

	page := fmt.Sprintf("http://%s/namespaces/%s/workflows/%s/%s/user-metadata",
		srv.UIAddress(), url.PathEscape(srv.Namespace()), url.PathEscape(id), info.GetExecution().GetRunId())
	b, err := startBrowser(ctx, t, browser)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.navigate(ctx, page); err != nil {
		t.Fatal(err)
	}
	headline := []string{"**Waiting for approval**: `write_file` `{", `"path":"notes.md"`}
	start := time.Now()
	var frames []frame
	for {
		err := b.eval(ctx, framesJS, &frames)
		markdown(frames)
		if err == nil && hasFrame(frames, headline...) && rendered(frames) {
			break
		}
		if time.Since(start) > 2*time.Minute {
			t.Fatalf("after %s, %s shows no headline naming the waiting call (%v); frames: %+v\nthe browser's output: %s",
				time.Since(start).Round(time.Second), page, err, frames, b.output())
		}
		time.Sleep(250 * time.Millisecond)
	}
	for _, f := range frames {
		if !strings.Contains(f.Markdown, "**Waiting for approval**") {
			continue
		}
		if !strings.HasPrefix(f.Markdown, "**Waiting for approval**") {
			t.Errorf("the current details do not start with the headline:\n%s", f.Markdown)
		}
		if !strings.Contains(f.Text, "write_file") || !strings.Contains(f.Text, "notes.md") {
			t.Errorf("the rendered headline reads %q; want the tool and its path", f.Text)
		}
		if fraction.MatchString(f.Markdown) {
			t.Errorf("the current details write a count as a fraction:\n%s", f.Markdown)
		}
	}
	if os.Getenv("TODOFLOW_WEBUI_SHOT") != "" {
		if png, err := b.screenshot(ctx); err == nil {
			_ = os.WriteFile(os.Getenv("TODOFLOW_WEBUI_SHOT"), png, 0o644)
		}
	}
}
