package chat

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"

	"github.com/todoflow/todoflow/client"
	"github.com/todoflow/todoflow/model"
)

// twelveLines is a diff of a file whose ten lines changed.
var twelveLines = "@@ -1,5 +1,5 @@\n" + strings.Repeat("-old\n", 5) + strings.Repeat("+new\n", 5) + `\ No newline at end of file`

func TestDiffEntries(t *testing.T) {
	tests := []struct {
		name  string
		diff  string
		limit int
		want  []string
	}{
		{"none", "", diffCollapsed, nil},
		{"short: whole", "@@ -1 +1 @@\n-a\n+b", diffCollapsed, []string{"    @@ -1 +1 @@", "    -a", "    +b"}},
		{"long: collapsed, saying how much is left", twelveLines, 4,
			[]string{"    @@ -1,5 +1,5 @@", "    -old", "    -old", "    … 9 more lines of the diff (Ctrl+O shows it whole)"}},
		{"whole", twelveLines, 0, strings.Split("    "+strings.ReplaceAll(twelveLines, "\n", "\n    "), "\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, e := range diffEntries(tt.diff, tt.limit) {
				if e.kind != kindDiff {
					t.Errorf("entry %+v is not a diff line", e)
				}
				got = append(got, e.text)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// The diff shows under its write_file's result, collapsed; Ctrl+O prints
// the latest one whole, named when a later result came since.
func TestTrackerShowsDiff(t *testing.T) {
	var tr tracker
	out := tr.applyAll([]client.Event{
		client.NewMessage{Message: model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "w1", Name: "write_file", Arguments: []byte(`{"path":"a.txt"}`)}}}},
		client.NewMessage{Message: model.Message{Role: model.RoleTool, ToolCallID: "w1", Content: "wrote 20 bytes to a.txt"}, Diff: twelveLines},
	})
	text := printed(out, &replyView{width: 80, colour: true})
	lines := strings.Split(sgr.ReplaceAllString(text, ""), "\n")
	if len(lines) != 2+diffCollapsed || !strings.HasPrefix(lines[0], "⏺ write_file") || lines[1] != "  ⎿ wrote 20 bytes to a.txt" ||
		lines[2] != "    @@ -1,5 +1,5 @@" || !strings.Contains(lines[len(lines)-1], "more lines of the diff (Ctrl+O") {
		t.Errorf("printed:\n%s", strings.Join(lines, "\n"))
	}

	whole := append(resultEntries(tr.result, tr.resultOf), latestDiffEntries(&tr)...)
	if n := len(whole); n != 2+12 || whole[2].text != "    @@ -1,5 +1,5 @@" {
		t.Errorf("Ctrl+O prints %d entries: %+v", n, whole)
	}
	if whole[0].text != "the latest tool result (write_file a.txt), whole:" {
		t.Errorf("Ctrl+O names the result %q, want its tool and file", whole[0].text)
	}
	// A todo tool's result is not what Ctrl+O prints: the write's stays.
	tr.apply(client.NewMessage{Message: model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "t1", Name: "write_todos"}}}})
	tr.apply(client.NewMessage{Message: model.Message{Role: model.RoleTool, ToolCallID: "t1", Content: "todos updated"}})
	if tr.result == nil || tr.result.ToolCallID != "w1" {
		t.Errorf("after write_todos the latest result is %+v, want the write's", tr.result)
	}
	tr.apply(client.NewMessage{Message: model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "r1", Name: "read_file", Arguments: []byte(`{"path":"b.txt"}`)}}}})
	tr.apply(client.NewMessage{Message: model.Message{Role: model.RoleTool, ToolCallID: "r1", Content: "b's text"}})
	whole = append(resultEntries(tr.result, tr.resultOf), latestDiffEntries(&tr)...)
	if whole[2].text != "the latest diff (write_file a.txt), whole:" || len(whole) != 3+12 {
		t.Errorf("Ctrl+O after another result prints %+v", whole)
	}
}

// Added lines are green and removed ones red; with NO_COLOR (the profile
// the program then reports) they are plain "+"/"-" text.
func TestDiffColours(t *testing.T) {
	above := printed(diffEntries("@@ -1 +1 @@\n-gone\n+here", 0), &replyView{width: 80, colour: true})
	for _, want := range []string{"\x1b[31m    -gone", "\x1b[32m    +here"} {
		if !strings.Contains(above, want) {
			t.Errorf("printed %q, want %q in it", above, want)
		}
	}
	for _, p := range []colorprofile.Profile{colorprofile.NoTTY, colorprofile.Ascii} {
		u := &ui{profile: p}
		plain := u.tone(above)
		if strings.Contains(plain, "\x1b[3") {
			t.Errorf("profile %v: colours left in %q", p, plain)
		}
		if !strings.Contains(plain, "    -gone") || !strings.Contains(plain, "    +here") {
			t.Errorf("profile %v: %q lost the lines", p, plain)
		}
	}
}

// A diff holds what a file held: its terminal controls are cleaned, as
// every other text the view prints.
func TestDiffCleaned(t *testing.T) {
	var tr tracker
	out := tr.applyAll([]client.Event{client.NewMessage{
		Message: model.Message{Role: model.RoleTool, ToolCallID: "w1", Content: "wrote"},
		Diff:    "@@ -0,0 +1 @@\n+" + hostile,
	}})
	checkShown(t, sgr.ReplaceAllString(printed(out, &replyView{width: 80, colour: true}), ""), 1)
}
