package testsuite

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"

	"github.com/todoflow/todoflow/activities"
)

// diffScript writes notes.txt, then rewrites it: one line changed and nine
// added, more than a diff shows collapsed.
const diffScript = `{"model": [
  {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": "one\ntwo\nthree\n"}}]},
  {"content": "Wrote notes.txt."},
  {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": "one\n2\nthree\nadded 1\nadded 2\nadded 3\nadded 4\nadded 5\nadded 6\nadded 7\nadded 8\nadded 9\n"}}]},
  {"content": "Changed notes.txt."}
]}`

// A file written twice shows its diffs under the write_file lines: all
// added the first time, the changed line removed and added the second,
// green and red, collapsed until Ctrl+O prints it whole; a client that
// comes back with NO_COLOR shows both again, in plain "+"/"-" text.
func TestChatShowsWriteDiff(t *testing.T) {
	tm := newTmux(t)
	s := startServer(t)
	s.startWorker(t, t.TempDir())
	bin := buildStarter(t)
	script := filepath.Join(t.TempDir(), "diff.json")
	if err := os.WriteFile(script, []byte(diffScript), 0o644); err != nil {
		t.Fatal(err)
	}
	const id = "chat-diff"
	env := []string{"TODOFLOW_STATE_DIR=" + t.TempDir(), "TEMPORAL_ADDRESS=", "TEMPORAL_NAMESPACE=", "TERM=xterm-256color"}
	chat := []string{bin, "chat", "--address", s.srv.Address(), "--namespace", s.srv.Namespace(), "--id", id}
	const limit = 90 * time.Second

	tm.start("first", env, append(chat, "--model", "script:"+script)...)
	tm.waitFor("first", limit, askFirst)
	tm.keys("first", "write the notes", "Enter")
	tm.waitFor("first", limit, "New session "+id)
	tm.waitFor("first", limit, "⎿ wrote 14 bytes to notes.txt", "    @@ -0,0 +1,3 @@", "    +one", "    +two", "    +three", "Wrote notes.txt.")
	tm.keys("first", "change them", "Enter")
	screen := tm.waitFor("first", limit, "    @@ -1,3 +1,12 @@", "    -two", "    +2", "more lines of the diff (Ctrl+O shows it whole)", "Changed notes.txt.")
	if strings.Contains(screen, "+added 9") {
		t.Errorf("the diff is not collapsed:\n%s", screen)
	}
	colours := tm.colours("first")
	for _, want := range []string{"\x1b[31m", "\x1b[32m"} { // red and green
		if !slices.Contains(colours, want) {
			t.Errorf("no %q among the screen's colours %q", want, colours)
		}
	}

	tm.keys("first", "C-o")
	tm.waitFor("first", limit, "the latest tool result", "    +added 9")

	tm.start("plain", append(env, "NO_COLOR=1"), chat...)
	tm.waitFor("plain", limit, "attached", "    +three", "    -two", "    +2", "Changed notes.txt.")
	if c := tm.colours("plain"); len(c) > 0 {
		t.Errorf("with NO_COLOR the screen has colours %q", c)
	}

	// What the diffs cost in history: each is in its tool activity's
	// result, once, and in nothing else.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tools := map[int64]bool{} // scheduled event ids of tool activities
	hunk := 0
	it := s.c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		// Payloads hold their bytes as they are in the event's encoding.
		b, _ := proto.Marshal(ev)
		hunk += strings.Count(string(b), "@@ -1,3 +1,12 @@")
		switch a := ev.GetAttributes().(type) {
		case *historypb.HistoryEvent_ActivityTaskScheduledEventAttributes:
			name := a.ActivityTaskScheduledEventAttributes.GetActivityType().GetName()
			tools[ev.GetEventId()] = name == api.ToolActivity || name == api.ToolOnHostActivity
		case *historypb.HistoryEvent_ActivityTaskCompletedEventAttributes:
			at := a.ActivityTaskCompletedEventAttributes
			if !tools[at.GetScheduledEventId()] {
				continue
			}
			var res activities.RunToolResult
			if err := converter.GetDefaultDataConverter().FromPayloads(at.GetResult(), &res); err != nil {
				t.Fatal(err)
			}
			without := res
			without.Diff = ""
			p, _ := converter.GetDefaultDataConverter().ToPayload(without)
			total := proto.Size(at.GetResult())
			t.Logf("history: a write_file result of %d bytes, %d of them its diff (%d bytes of diff text)", total, total-proto.Size(p)-2, len(res.Diff))
		}
	}
	if hunk != 1 {
		t.Errorf("the second diff is in history %d times, want once", hunk)
	}
}
