package callview

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/api"
	"github.com/todoflow/todoflow/client"
)

func TestLines(t *testing.T) {
	for _, tt := range []struct {
		name string
		c    client.WaitingCall
		want []string
	}{
		{"write_file", client.WaitingCall{Tool: "write_file", Whole: true, Arguments: json.RawMessage(`{"content":"a\nb\n","path":"x.sh"}`)},
			[]string{"  path: x.sh", "  content (2 lines): " + NoDiff + ":", "    1 │ a", "    2 │ b"}},
		{"write_file with its diff", client.WaitingCall{Tool: "write_file", Whole: true, Arguments: json.RawMessage(`{"path":"x.sh","content":"a\nb\n"}`),
			Diff: &api.CallDiff{Hunks: "@@ -1 +1,2 @@\n a\n+b", Added: 1}},
			[]string{"  path: x.sh", "  diff: what the call would change, +1 −0 lines:", "    @@ -1 +1,2 @@", "     a", "    +b",
				"  content (2 lines): the new file, whole:", "    1 │ a", "    2 │ b"}},
		{"write_file of a new file", client.WaitingCall{Tool: "write_file", Whole: true, Arguments: json.RawMessage(`{"path":"x.sh","content":"a\n"}`),
			Diff: &api.CallDiff{Hunks: "@@ -0,0 +1 @@\n+a", Added: 1, New: true}},
			[]string{"  path: x.sh", "  diff: a new file of 1 line (its content below is the whole file)", "  content (1 line): the new file, whole:", "    1 │ a"}},
		{"write_file whose diff is unavailable", client.WaitingCall{Tool: "write_file", Whole: true, Arguments: json.RawMessage(`{"path":"x.sh","content":"a\n"}`),
			Diff: &api.CallDiff{Unavailable: "the workspace's host h1 did not answer"}},
			[]string{"  path: x.sh", "  diff unavailable: the workspace's host h1 did not answer", "  content (1 line): the new file, whole:", "    1 │ a"}},
		{"write_file whose diff is a note", client.WaitingCall{Tool: "write_file", Whole: true, Arguments: json.RawMessage(`{"path":"x.sh","content":"a\n"}`),
			Diff: &api.CallDiff{Hunks: `\ no change: the file already had this content`}},
			[]string{"  path: x.sh", "  diff: no change: the file already had this content", "  content (1 line): the new file, whole:", "    1 │ a"}},
		{"texts and values", client.WaitingCall{Tool: "run", Whole: true, Arguments: json.RawMessage(`{"script":"set -e\nmake","env":{"A": 1},"dry":false,"note":""}`)},
			[]string{`  env: {"A":1}`, "  dry: false", "  note: ", "  script (2 lines):", "    1 │ set -e", "    2 │ make"}},
		{"no arguments", client.WaitingCall{Tool: "now", Whole: true, Arguments: json.RawMessage(`{}`)}, []string{"  (no arguments)"}},
		{"not an object", client.WaitingCall{Tool: "odd", Whole: true, Arguments: json.RawMessage(`[1, 2]`)}, []string{"  arguments: [1,2]"}},
		{"not whole", client.WaitingCall{Cut: `call c9 of run {"cmd":"make"…`},
			[]string{`  only the start of this call is known (the whole call could not be read): call c9 of run {"cmd":"make"…`}},
	} {
		if got := Text(tt.c); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s:\n%s\nwant\n%s", tt.name, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
		}
	}
}

func TestHeader(t *testing.T) {
	if got, want := Header(client.WaitingCall{AgentID: "main", CallID: "c1", Tool: "write_file"}), "write_file · call c1 · agent main"; got != want {
		t.Errorf("Header = %q, want %q", got, want)
	}
	if got := Header(client.WaitingCall{AgentID: "coder", CallID: "c9"}); !strings.HasPrefix(got, "a tool call · call c9") {
		t.Errorf("Header of a call not read = %q", got)
	}
}

// The lines of a diff's hunks are marked, for a view to colour; the
// heading and the arguments are not.
func TestLinesMarkTheDiff(t *testing.T) {
	c := client.WaitingCall{Tool: "write_file", Whole: true, Arguments: json.RawMessage(`{"path":"x","content":"b\n"}`),
		Diff: &api.CallDiff{Hunks: "@@ -1 +1 @@\n-a\n+b", Added: 1, Removed: 1}}
	var marked []string
	for _, l := range Lines(c) {
		if l.Diff {
			marked = append(marked, l.Text)
		}
	}
	if want := []string{"    @@ -1 +1 @@", "    -a", "    +b"}; strings.Join(marked, "|") != strings.Join(want, "|") {
		t.Errorf("marked %q, want %q", marked, want)
	}
}
