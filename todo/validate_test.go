package todo

import (
	"encoding/json"
	"strings"
	"testing"
)

func items(spec ...string) []Item {
	// spec entries are "status:content"
	var out []Item
	for i, s := range spec {
		st, content, _ := strings.Cut(s, ":")
		out = append(out, Item{ID: string(rune('1' + i)), Content: content, Status: Status(st)})
	}
	return out
}

func settings(p Policy) Settings {
	s, err := Config{InProgressPolicy: p}.Resolve(false)
	if err != nil {
		panic(err)
	}
	return s
}

func TestParseWrite(t *testing.T) {
	tests := []struct {
		name    string
		args    string
		want    []Item
		wantErr string
	}{
		{"ids filled as 1-based index", `{"todos":[{"content":"a","status":"pending"},{"content":"b","status":"in_progress","priority":"high"}]}`,
			[]Item{{ID: "1", Content: "a", Status: Pending}, {ID: "2", Content: "b", Status: InProgress, Priority: High}}, ""},
		{"given ids kept, numbers accepted", `{"todos":[{"id":"x","content":"a","status":"pending"},{"id":7,"content":"b","status":"blocked"}]}`,
			[]Item{{ID: "x", Content: "a", Status: Pending}, {ID: "7", Content: "b", Status: Blocked}}, ""},
		{"filled id skips an explicit one", `{"todos":[{"content":"a","status":"pending"},{"id":"1","content":"b","status":"in_progress"}]}`,
			[]Item{{ID: "2", Content: "a", Status: Pending}, {ID: "1", Content: "b", Status: InProgress}}, ""},
		{"filled id skips a numeric explicit id", `{"todos":[{"content":"a","status":"pending"},{"id":1,"content":"b","status":"in_progress"}]}`,
			[]Item{{ID: "2", Content: "a", Status: Pending}, {ID: "1", Content: "b", Status: InProgress}}, ""},
		{"filled ids skip each other and later explicit ids", `{"todos":[{"content":"a","status":"pending"},{"content":"b","status":"pending"},{"id":"2","content":"c","status":"in_progress"},{"id":"4","content":"d","status":"pending"}]}`,
			[]Item{{ID: "1", Content: "a", Status: Pending}, {ID: "3", Content: "b", Status: Pending},
				{ID: "2", Content: "c", Status: InProgress}, {ID: "4", Content: "d", Status: Pending}}, ""},
		{"filled id keeps its position when free", `{"todos":[{"id":"x","content":"a","status":"pending"},{"content":"b","status":"in_progress"}]}`,
			[]Item{{ID: "x", Content: "a", Status: Pending}, {ID: "2", Content: "b", Status: InProgress}}, ""},
		{"blank id is filled", `{"todos":[{"id":"  ","content":"a","status":"in_progress"},{"id":"1","content":"b","status":"pending"}]}`,
			[]Item{{ID: "2", Content: "a", Status: InProgress}, {ID: "1", Content: "b", Status: Pending}}, ""},
		{"Gemini description accepted", `{"todos":[{"description":"a","status":"cancelled"}]}`,
			[]Item{{ID: "1", Content: "a", Status: Cancelled}}, ""},
		{"empty list", `{"todos":[]}`, []Item{}, ""},
		{"not an object", `[1,2]`, nil, "JSON object"},
		{"invalid JSON", `{"todos":`, nil, "not valid JSON"},
		{"todos missing", `{"items":[]}`, nil, `"todos" is missing`},
		{"todos not an array", `{"todos":"a"}`, nil, "must be an array"},
		{"item not an object", `{"todos":["a"]}`, nil, "todos[0]: must be an object"},
		{"content missing", `{"todos":[{"status":"pending"}]}`, nil, "todos[0]: content is missing"},
		{"status missing", `{"todos":[{"content":"a"}]}`, nil, "todos[0]: status is missing"},
		{"bad status", `{"todos":[{"content":"a","status":"done"}]}`, nil, `status "done"`},
		{"bad priority", `{"todos":[{"content":"a","status":"pending","priority":"urgent"}]}`, nil, `priority "urgent"`},
		{"wrong type", `{"todos":[{"content":5,"status":"pending"}]}`, nil, "todos[0]: content must be a string, not a number"},
		{"wrong type, named in the model's spelling", `{"todos":[{"content":"a","Status":["pending"]}]}`, nil, "todos[0]: status must be a string, not an array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseWrite(json.RawMessage(tt.args))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !Equal(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		policy  Policy
		allow   bool
		old     []Item
		next    []Item
		want    []Item // nil: same as next
		wantErr string
	}{
		// cubepi's order: empty over unfinished, blank content, in-progress rule.
		{"empty over unfinished refused", ExactlyOne, false, items("pending:a"), []Item{}, nil, "empty list would drop 1 unfinished"},
		{"empty over unfinished allowed by setting", ExactlyOne, true, items("pending:a"), []Item{}, []Item{}, ""},
		{"empty over finished clears", ExactlyOne, false, items("completed:a", "cancelled:b"), []Item{}, []Item{}, ""},
		{"empty first list", ExactlyOne, false, nil, []Item{}, []Item{}, ""},
		{"blank content refused", ExactlyOne, false, nil, items("in_progress:a", "pending:   "), nil, "todos[1]: content is blank"},
		{"blank beats policy", ExactlyOne, false, nil, items("pending: "), nil, "content is blank"},
		{"content at the cap ok", Any, false, nil, []Item{{ID: "1", Content: strings.Repeat("c", MaxItemBytes), Status: Pending}}, nil, ""},
		{"content over the cap refused", Any, false, nil, []Item{{ID: "1", Content: strings.Repeat("c", MaxItemBytes+1), Status: Pending}}, nil, "todos[0]: an item's content is 2001 bytes, over 2000"},
		{"id at the cap ok", Any, false, nil, []Item{{ID: strings.Repeat("i", MaxItemIDBytes), Content: "a", Status: Pending}}, nil, ""},
		{"id over the cap refused", Any, false, nil, []Item{{ID: strings.Repeat("i", MaxItemIDBytes+1), Content: "a", Status: Pending}}, nil, "todos[0]: an item's id is 129 bytes, over 128"},
		{"duplicate ids refused", Any, false, nil, []Item{{ID: "1", Content: "a", Status: Pending}, {ID: "1", Content: "b", Status: Pending}}, nil, "already used"},

		{"exactly_one: one ok", ExactlyOne, false, nil, items("in_progress:a", "pending:b"), nil, ""},
		{"exactly_one: zero refused", ExactlyOne, false, nil, items("pending:a", "pending:b"), nil, "no item is in_progress"},
		{"exactly_one: two refused", ExactlyOne, false, nil, items("in_progress:a", "in_progress:b"), nil, "2 items are in_progress"},
		{"exactly_one: all finished ok", ExactlyOne, false, nil, items("completed:a", "cancelled:b"), nil, ""},
		{"exactly_one: only blocked left ok", ExactlyOne, false, nil, items("completed:a", "blocked:b"), nil, ""},
		// Blocked items cannot be worked on: with no pending item, zero in
		// progress is allowed; one pending item brings the rule back.
		{"exactly_one: all blocked, none in progress ok", ExactlyOne, false, nil, items("blocked:a", "blocked:b"), nil, ""},
		{"exactly_one: blocked and cancelled ok", ExactlyOne, false, nil, items("cancelled:a", "blocked:b", "completed:c"), nil, ""},
		{"exactly_one: blocked with one in progress ok", ExactlyOne, false, nil, items("blocked:a", "in_progress:b"), nil, ""},
		{"exactly_one: blocked and pending, none in progress refused", ExactlyOne, false, nil, items("blocked:a", "pending:b"), nil, "no item is in_progress"},
		{"exactly_one: blocked and two in progress refused", ExactlyOne, false, nil, items("blocked:a", "in_progress:b", "in_progress:c"), nil, "2 items are in_progress"},
		{"at_most_one: all blocked ok", AtMostOne, false, nil, items("blocked:a"), nil, ""},

		{"at_most_one: zero ok", AtMostOne, false, nil, items("pending:a"), nil, ""},
		{"at_most_one: two refused", AtMostOne, false, nil, items("in_progress:a", "in_progress:b"), nil, "at most one"},

		{"normalize keeps the last", Normalize, false, nil, items("in_progress:a", "in_progress:b", "in_progress:c"),
			items("pending:a", "pending:b", "in_progress:c"), ""},
		{"normalize leaves one alone", Normalize, false, nil, items("in_progress:a", "pending:b"), nil, ""},

		{"any: two ok", Any, false, nil, items("in_progress:a", "in_progress:b"), nil, ""},
		{"any: zero ok", Any, false, nil, items("pending:a"), nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := settings(tt.policy)
			s.AllowEmptyOverUnfinished = tt.allow
			got, err := Validate(tt.old, tt.next, s)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if want == nil {
				want = tt.next
			}
			if !Equal(got, want) {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
}

func TestResolveDefaultsAndErrors(t *testing.T) {
	s, err := Config{}.Resolve(false)
	if err != nil {
		t.Fatal(err)
	}
	want := Settings{Enabled: true, InProgressPolicy: ExactlyOne, FinalizationMaxCorrections: 1, Continuation: true,
		ContinuationMax: 2, StaleThreshold: 5, StaleInterval: 5, PlanApproval: ApprovalRequired}
	if s != want {
		t.Errorf("defaults = %+v, want %+v", s, want)
	}
	if s, _ := (Config{}).Resolve(true); s.PlanApproval != ApprovalAuto {
		t.Errorf("subagent plan approval = %q, want auto", s.PlanApproval)
	}
	zero, off := 0, false
	s, err = Config{FinalizationMaxCorrections: &zero, Continuation: &off, Enabled: &off}.Resolve(false)
	if err != nil || s.FinalizationMaxCorrections != 0 || s.Continuation || s.Enabled {
		t.Errorf("explicit zero values lost: %+v, %v", s, err)
	}
	neg := -1
	for name, c := range map[string]Config{
		"policy":   {InProgressPolicy: "two"},
		"approval": {PlanApproval: "maybe"},
		"negative": {ContinuationMax: &neg},
		"interval": {StaleInterval: &zero},
	} {
		if _, err := c.Resolve(false); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// The ids ParseWrite fills in never make Validate refuse a list whose
// explicit ids are unique.
func TestFilledIDsPassValidation(t *testing.T) {
	for _, args := range []string{
		`{"todos":[{"content":"a","status":"in_progress"},{"id":"1","content":"b","status":"pending"}]}`,
		`{"todos":[{"id":"3","content":"a","status":"in_progress"},{"content":"b","status":"pending"},{"content":"c","status":"pending"},{"id":"2","content":"d","status":"pending"}]}`,
	} {
		st := &State{}
		r := Apply(st, []Call{writeCall(args)}, settings(ExactlyOne))[0]
		if r.IsError {
			t.Errorf("%s: %s", args, r.Content)
			continue
		}
		seen := map[string]bool{}
		for _, it := range st.Todos {
			if seen[it.ID] {
				t.Errorf("%s: id %q twice in %+v", args, it.ID, st.Todos)
			}
			seen[it.ID] = true
		}
	}
}
