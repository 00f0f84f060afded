package todo

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func writeCall(args string) Call { return Call{Name: ToolWrite, Args: json.RawMessage(args)} }

func TestApplyParallelWritesRollBack(t *testing.T) {
	st := &State{Todos: items("in_progress:a")}
	before := slices.Clone(st.Todos)
	res := Apply(st, []Call{
		writeCall(`{"todos":[{"content":"a","status":"completed"}]}`),
		{Name: "read_file", Args: json.RawMessage(`{}`)},
		writeCall(`{"todos":[{"content":"b","status":"in_progress"}]}`),
	}, settings(ExactlyOne))
	if res[1] != nil {
		t.Errorf("non-todo tool was answered: %+v", res[1])
	}
	for _, i := range []int{0, 2} {
		if res[i] == nil || !res[i].IsError || !strings.Contains(res[i].Content, "2 times") {
			t.Errorf("result %d = %+v, want a parallel-call error", i, res[i])
		}
	}
	if !Equal(st.Todos, before) {
		t.Errorf("list changed to %+v", st.Todos)
	}
}

func TestApplyWriteThenRead(t *testing.T) {
	st := &State{}
	res := Apply(st, []Call{
		writeCall(`{"todos":[{"content":"a","status":"in_progress"},{"content":"b","status":"pending","priority":"high"}]}`),
		{Name: ToolRead},
	}, settings(ExactlyOne))
	if res[0].IsError || !strings.Contains(res[0].Content, "2 items") {
		t.Errorf("write = %+v", res[0])
	}
	if !strings.Contains(res[1].Content, "## In progress (1)") || !strings.Contains(res[1].Content, "- 2. b [high]") {
		t.Errorf("read after write does not show the new list:\n%s", res[1].Content)
	}
}

func TestApplyDisabledLeavesTodoToolsAlone(t *testing.T) {
	s := settings(ExactlyOne)
	s.Enabled = false
	if res := Apply(&State{}, []Call{{Name: ToolRead}}, s); res[0] != nil {
		t.Errorf("disabled todo list answered todo_read: %+v", res[0])
	}
	if len(Tools(s)) != 0 {
		t.Error("disabled todo list still offers tools")
	}
}

func TestFinalCheckReminderAtThreeCompleted(t *testing.T) {
	for n, want := range map[int]bool{2: false, 3: true} {
		var list []string
		for range n {
			list = append(list, `{"content":"x","status":"completed"}`)
		}
		for i := range list {
			list[i] = strings.Replace(list[i], `"x"`, `"x`+string(rune('a'+i))+`"`, 1)
		}
		st := &State{}
		r := Apply(st, []Call{writeCall(`{"todos":[` + strings.Join(list, ",") + `]}`)}, settings(ExactlyOne))[0]
		if got := strings.Contains(r.Content, "final check"); got != want {
			t.Errorf("%d completed items: final-check reminder %v, want %v (%s)", n, got, want, r.Content)
		}
	}
}

func TestRepeatedRefusalSaysSo(t *testing.T) {
	st := &State{}
	bad := `{"todos":[{"content":"a","status":"pending"}]}`
	badReordered := `{ "todos": [ {"status":"pending", "content":"a"} ] }`
	s := settings(ExactlyOne)
	for i, args := range []string{bad, badReordered, bad} {
		r := Apply(st, []Call{writeCall(args)}, s)[0]
		stuck := strings.Contains(r.Content, "3 times in a row")
		if !r.IsError || stuck != (i == 2) {
			t.Errorf("call %d: %+v", i+1, r)
		}
	}
	// A different refused list starts the count again; a success clears it.
	r := Apply(st, []Call{writeCall(`{"todos":[{"content":"b","status":"pending"}]}`)}, s)[0]
	if strings.Contains(r.Content, "in a row") {
		t.Errorf("different list still counted as a repeat: %s", r.Content)
	}
	Apply(st, []Call{writeCall(`{"todos":[{"content":"b","status":"in_progress"}]}`)}, s)
	if st.Refusals != 0 || st.LastRefused != "" {
		t.Errorf("success did not reset the refusal count: %+v", st)
	}
}

func TestPauseReason(t *testing.T) {
	tests := []struct {
		name   string
		args   string
		paused bool
	}{
		{"500 characters accepted", `{"reason":"` + strings.Repeat("é", 500) + `"}`, true},
		{"501 characters refused", `{"reason":"` + strings.Repeat("a", 501) + `"}`, false},
		{"one character accepted", `{"reason":"x"}`, true},
		{"blank refused", `{"reason":"  "}`, false},
		{"missing refused", `{}`, false},
		{"not an object refused", `"stop"`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &State{}
			r := Apply(st, []Call{{Name: ToolPause, Args: json.RawMessage(tt.args)}}, settings(ExactlyOne))[0]
			if st.Paused != tt.paused || r.IsError == tt.paused {
				t.Errorf("paused=%v result=%+v", st.Paused, r)
			}
		})
	}
}

func TestToolsAndPrompt(t *testing.T) {
	s := settings(ExactlyOne)
	tools := Tools(s)
	if len(tools) != 3 || tools[0].Name != ToolWrite || tools[1].Name != ToolRead || tools[2].Name != ToolPause {
		t.Fatalf("tools = %+v", tools)
	}
	for _, d := range tools {
		if !json.Valid(d.Parameters) {
			t.Errorf("%s: parameters are not valid JSON", d.Name)
		}
	}
	s.ToolDescription = "Custom."
	if Tools(s)[0].Description != "Custom." {
		t.Error("tool_description not used")
	}
	if p := SystemPrompt("Base.", settings(ExactlyOne)); !strings.HasPrefix(p, "Base.\n\n") || !strings.Contains(p, "write_todos") {
		t.Errorf("prompt = %q", p)
	}
	s.SystemPrompt = "## Mine"
	if p := SystemPrompt("Base.", s); p != "Base.\n\n## Mine" {
		t.Errorf("custom prompt = %q", p)
	}
}

func TestViews(t *testing.T) {
	list := items("completed:a", "in_progress:b", "pending:c\nwith a newline", "blocked:d")
	view := ReadView(list)
	for _, want := range []string{"# Todo list (4 items: 1 in progress, 1 pending, 1 blocked, 1 completed)", "## In progress (1)\n- 2. b", "- 3. c with a newline"} {
		if !strings.Contains(view, want) {
			t.Errorf("read view lacks %q:\n%s", want, view)
		}
	}
	if strings.Index(view, "In progress") > strings.Index(view, "Pending") {
		t.Error("in progress is not listed first")
	}
	if ReadView(nil) != "The todo list is empty." {
		t.Error("empty view")
	}
	cl := Checklist(list)
	if !strings.Contains(cl, "- [x] a\n- [>] b\n- [ ] c with a newline\n- [~] d") || !strings.HasSuffix(cl, "Done: 1/4") {
		t.Errorf("checklist:\n%s", cl)
	}
}
