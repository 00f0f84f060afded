package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	tfclient "github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/model"
	"github.com/todoflow/todoflow/todo"
)

// `starter approve ID` shows the waiting call whole and answers nothing
// until told which call: --call with the id it showed approves that one,
// and the same id once answered is refused, never taken for the call that
// waits next; --reject -y refuses the one call shown, with a feedback.
func TestApproveShowsTheCallFirst(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, cl := scriptedServer(ctx, t)

	// A file of 200 lines whose line 150 pipes a download into a shell,
	// then a second write.
	var file strings.Builder
	for i := 1; i <= 200; i++ {
		if i == 150 {
			file.WriteString("curl x | sh\n")
			continue
		}
		fmt.Fprintf(&file, "step %d\n", i)
	}
	write := func(path, content string) map[string]any {
		return map[string]any{"tool_calls": []any{map[string]any{"name": "write_file", "arguments": map[string]string{"path": path, "content": content}}}}
	}
	script, _ := json.Marshal(map[string]any{"model": []any{write("INSTALL.md", file.String()), write("b.txt", "beta"), map[string]string{"content": "Done."}}})
	path := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(path, script, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := c.client(cl).Start(ctx, api.AgentInput{Prompt: "Write the notes", Model: "script:" + path,
		Approval: todo.ToolApproval{"write_file": "required"}}, tfclient.StartOptions{ID: "approve-1"})
	if err != nil {
		t.Fatal(err)
	}
	looks := s.Watch(ctx, 50*time.Millisecond)
	// waitsFor waits until call waits for approval; "" until the turn has
	// ended.
	waitsFor := func(call string) {
		t.Helper()
		for ev := range looks {
			st, ok := ev.(tfclient.StateChanged)
			switch {
			case !ok:
			case call == "" && st.State.Status == api.StatusWaitingUser:
				return
			case st.State.PendingApproval != nil && st.State.PendingApproval.CallID == call:
				return
			}
		}
		t.Fatalf("call %q never came to wait: %v", call, ctx.Err())
	}
	starter := func(args ...string) (code int, stdout, stderr string) {
		var errs strings.Builder
		stdout, _ = captureOutput(t, func() {
			code = runCLI(append(args, "--address", c.address, "--namespace", c.namespace), io.Discard, &errs)
		}, nil)
		return code, stdout, errs.String()
	}

	waiting := "call_1_0"
	waitsFor(waiting)
	for _, tt := range []struct {
		args     []string
		code     int
		out, err string
		next     string // the call that waits afterwards, "" for none
	}{
		// Shown, not answered, and told how.
		{[]string{"approve", "approve-1"}, 2, "150 │ curl x | sh", "--call call_1_0", "call_1_0"},
		{[]string{"approve", "approve-1", "--call", "call_1_0"}, 0, "approved", "", "call_2_0"},
		// Run again with the id it approved: refused, the next call shown.
		{[]string{"approve", "approve-1", "--call", "call_1_0"}, 1, "1 │ beta", "call call_1_0 no longer waits", "call_2_0"},
		{[]string{"approve", "approve-1", "-y", "--reject", "--feedback", "leave b alone"}, 0, "rejected", "", ""},
	} {
		code, out, errs := starter(tt.args...)
		if code != tt.code || !strings.Contains(out, tt.out) || !strings.Contains(errs, tt.err) {
			t.Errorf("starter %s: exit %d, want %d; stdout %.2000q, want %q; stderr %q, want %q",
				strings.Join(tt.args, " "), code, tt.code, out, tt.out, errs, tt.err)
		}
		if tt.next != waiting {
			waitsFor(tt.next)
		}
		waiting = tt.next
	}

	msgs, err := s.Messages(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var results []string
	for _, m := range msgs {
		if m.Role == model.RoleTool {
			results = append(results, fmt.Sprintf("%v %s", m.IsError, m.Content))
		}
	}
	if len(results) != 2 || !strings.HasPrefix(results[0], "false") || !strings.Contains(results[1], "leave b alone") {
		t.Errorf("tool results %q: want the first written, the second refused with the feedback", results)
	}
}
