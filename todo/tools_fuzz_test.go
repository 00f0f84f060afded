package todo

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/internal/fuzzcheck"
)

// Fuzz targets of this package. `go test ./todo` replays their seeds (the
// f.Add calls and testdata/fuzz/<target>); searching for new inputs is opt-in:
//
//	go test ./todo -run '^$' -fuzz '^FuzzWriteTodos$' -fuzztime 60s -parallel 2
//	go test ./todo -run '^$' -fuzz '^FuzzPlanTools$' -fuzztime 60s -parallel 2

// checkRefusal fails t unless msg is what a refused call should say to the
// model: "Refused: " and a reason, not a Go runtime message or a formatting
// mistake.
func checkRefusal(t *testing.T, what, msg string) {
	t.Helper()
	reason, ok := strings.CutPrefix(msg, "Refused: ")
	if !ok || strings.TrimSpace(reason) == "" {
		t.Fatalf("%s: refusal %q does not start with \"Refused: \" and a reason", what, msg)
	}
	fuzzcheck.Message(t, what, msg)
}

var fuzzPolicies = []Policy{ExactlyOne, AtMostOne, Normalize, Any}

// fuzzOldLists are the lists a write_todos may replace: none, one with work
// left, one whose items are all finished.
var fuzzOldLists = [][]Item{
	nil,
	{{ID: "1", Content: "Read the code", Status: Completed}, {ID: "2", Content: "Write the fix", Status: InProgress}, {ID: "3", Content: "Test it", Status: Pending, Priority: High}},
	{{ID: "a", Content: "Done", Status: Completed}, {ID: "b", Content: "Dropped", Status: Cancelled}},
}

// writeSeeds are write_todos arguments taken from the scenarios, the
// validation tests and models' usual mistakes.
var writeSeeds = []string{
	`{"todos":[{"content":"Read the code","status":"in_progress"},{"content":"Write the fix","status":"pending"}]}`,
	`{"todos": [{"content": "Read the code", "status": "completed"}, {"content": "Write the fix", "status": "in_progress"}, {"content": "Run the tests", "status": "pending", "priority": "high"}]}`,
	`{"todos":[{"id":"x","content":"a","status":"pending"},{"id":7,"content":"b","status":"blocked"}]}`,
	`{"todos":[{"content":"a","status":"pending"},{"id":1,"content":"b","status":"in_progress"}]}`,
	`{"todos":[{"id":"  ","content":"a","status":"in_progress"},{"id":"1","content":"b","status":"pending"}]}`,
	`{"todos":[{"description":"a","status":"cancelled"}]}`,
	`{"todos":[]}`,
	`{"todos":[{"content":"a","status":"in_progress"},{"content":"b","status":"in_progress"}]}`,
	`{"todos":[{"content":"a","status":"pending"}]}`,
	`{"todos":[{"id":"1","content":"a","status":"pending"},{"id":"1","content":"b","status":"in_progress"}]}`,
	`{"todos":[{"content":"  ","status":"in_progress"}]}`,
	`{"todos":[{"content":"a","status":"done"}]}`,
	`{"todos":[{"content":"a","status":"pending","priority":"urgent"}]}`,
	`{"todos":[{"content":5,"status":"pending"}]}`,
	`{"todos":[{"content":"a","status":"in_progress","id":{"x":1}}]}`,
	`{"todos":["a"]}`,
	`{"todos":"a"}`,
	`{"items":[]}`,
	`{"todos":`,
	`[1,2]`,
	`"{\"todos\":[]}"`,
	``,
	`null`,
	`{"todos":null}`,
	`{"todos":[{"content":"a","status":"in_progress","id":1e400}]}`,
	`{"todos":[{"content":"caf\u00e9 \ud83d\ude00","status":"in_progress","id":"\u0000"}]}`,
}

// FuzzWriteTodos runs write_todos through Apply, as the workflow does, with
// any arguments, in-progress policy and previous list. A refusal leaves the
// list alone and says why; an accepted list obeys every rule of the list, and
// applying the same call again, or the stored list written back as it is,
// changes nothing.
func FuzzWriteTodos(f *testing.F) {
	for i, seed := range writeSeeds {
		f.Add([]byte(seed), uint8(i%len(fuzzPolicies)), uint8(i%len(fuzzOldLists)), i%5 == 0)
	}
	f.Fuzz(func(t *testing.T, args []byte, policy, old uint8, allowEmpty bool) {
		s, err := Config{InProgressPolicy: fuzzPolicies[int(policy)%len(fuzzPolicies)], AllowEmptyOverUnfinished: allowEmpty}.Resolve(false)
		if err != nil {
			t.Fatal(err)
		}
		before := slices.Clone(fuzzOldLists[int(old)%len(fuzzOldLists)])
		st := &State{Todos: slices.Clone(before)}

		res := fuzzWrite(t, st, args, s)
		if res.IsError {
			checkRefusal(t, "write_todos", res.Content)
			if !Equal(st.Todos, before) {
				t.Fatalf("a refused write_todos changed the list from %+v to %+v", before, st.Todos)
			}
			return
		}
		fuzzcheck.Message(t, "write_todos", res.Content)
		checkList(t, st.Todos, s)

		first := append([]Item{}, st.List()...)
		if again := fuzzWrite(t, st, args, s); again.IsError || !Equal(st.Todos, first) {
			t.Fatalf("the same write_todos again: %q, list %+v; want it accepted and the list unchanged %+v", again.Content, st.Todos, first)
		}
		stored, err := json.Marshal(map[string][]Item{"todos": first})
		if err != nil {
			t.Fatal(err)
		}
		if back := fuzzWrite(t, st, stored, s); back.IsError || !Equal(st.Todos, first) {
			t.Fatalf("the stored list written back (%s): %q, list %+v; want it unchanged", stored, back.Content, st.Todos)
		}
	})
}

// fuzzWrite applies one write_todos call and returns its result.
func fuzzWrite(t *testing.T, st *State, args []byte, s Settings) Result {
	t.Helper()
	res := Apply(st, []Call{{ID: "call_1", Name: ToolWrite, Args: args}}, s)
	if len(res) != 1 || res[0] == nil {
		t.Fatalf("Apply answered %v for one write_todos call", res)
	}
	if res[0].Content == "" {
		t.Fatal("write_todos answered with an empty message")
	}
	return *res[0]
}

// checkList fails t unless list obeys the rules of an accepted list.
func checkList(t *testing.T, list []Item, s Settings) {
	t.Helper()
	ids := map[string]bool{}
	for i, it := range list {
		if it.ID == "" || ids[it.ID] {
			t.Fatalf("todos[%d] has an empty or repeated id %q: %+v", i, it.ID, list)
		}
		ids[it.ID] = true
		if strings.TrimSpace(it.Content) == "" || !it.Status.Valid() || !it.Priority.Valid() {
			t.Fatalf("todos[%d] = %+v was accepted", i, it)
		}
	}
	active := CountStatus(list, InProgress)
	switch s.InProgressPolicy {
	case ExactlyOne:
		if active > 1 || active == 0 && CountStatus(list, Pending) > 0 {
			t.Fatalf("exactly_one accepted %d in progress with %d pending: %+v", active, CountStatus(list, Pending), list)
		}
	case AtMostOne, Normalize:
		if active > 1 {
			t.Fatalf("%s accepted %d in progress: %+v", s.InProgressPolicy, active, list)
		}
	}
}
