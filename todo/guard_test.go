package todo

import (
	"strings"
	"testing"
)

func defaults() Settings { return settings(ExactlyOne) }

func TestStaleReminderAtFiveAndTen(t *testing.T) {
	st := &State{Todos: items("in_progress:a", "pending:b")}
	s := defaults()
	var fired []int
	for i := 1; i <= 15; i++ {
		if in := AfterTools(st, s, []string{"read_file"}); !in.None() {
			if in.Name != NameStaleReminder || !strings.Contains(in.Text, "- [pending] b") {
				t.Errorf("reminder %d = %+v", i, in)
			}
			fired = append(fired, i)
		}
	}
	if len(fired) != 3 || fired[0] != 5 || fired[1] != 10 || fired[2] != 15 {
		t.Errorf("stale reminders at %v, want [5 10 15]", fired)
	}
}

func TestStaleResets(t *testing.T) {
	s := defaults()
	for name, reset := range map[string]func(*State){
		"write_todos":          func(st *State) { AfterTools(st, s, []string{"read_file", ToolWrite}) },
		"tool-free response":   func(st *State) { EndOfTurn(st, s, false, nil) },
		"refused write counts": func(st *State) { AfterTools(st, s, []string{ToolWrite, ToolWrite}) },
	} {
		t.Run(name, func(t *testing.T) {
			st := &State{Todos: items("in_progress:a")}
			for range 4 {
				AfterTools(st, s, []string{"list_files"})
			}
			reset(st)
			st.Todos = items("in_progress:a")
			st.GuardRetries = nil
			for i := 1; i <= 4; i++ {
				if !AfterTools(st, s, []string{"list_files"}).None() {
					t.Fatalf("reminder %d call(s) after the reset", i)
				}
			}
			if AfterTools(st, s, []string{"list_files"}).None() {
				t.Error("no reminder 5 calls after the reset")
			}
		})
	}
	st := &State{Todos: items("in_progress:a")}
	for range 10 {
		if !AfterTools(st, s, []string{ToolRead}).None() {
			t.Fatal("todo_read alone counted as another tool")
		}
	}
	if st.StaleIterations != 0 {
		t.Errorf("todo_read changed the count to %d", st.StaleIterations)
	}
	st = &State{Todos: items("completed:a")}
	for range 5 {
		if !AfterTools(st, s, []string{"list_files"}).None() {
			t.Fatal("reminder with nothing unfinished")
		}
	}
}

func TestCompletionReminderListsOnlyUnfinished(t *testing.T) {
	st := &State{Todos: items("completed:Read the code", "in_progress:Write the fix", "cancelled:Old idea", "blocked:Deploy")}
	in := EndOfTurn(st, defaults(), true, nil)
	if in.Name != NameCompletionReminder {
		t.Fatalf("got %+v", in)
	}
	for _, want := range []string{"Write the fix", "Deploy"} {
		if !strings.Contains(in.Text, want) {
			t.Errorf("reminder lacks %q", want)
		}
	}
	for _, not := range []string{"Read the code", "Old idea"} {
		if strings.Contains(in.Text, not) {
			t.Errorf("reminder lists finished %q", not)
		}
	}
	if st.FinalizationCorrection == nil || !*st.FinalizationCorrection || st.GuardRetries[RetryFinalization] != 1 {
		t.Errorf("state after the guard: %+v", st)
	}
}

func TestEndOfTurnSequence(t *testing.T) {
	three := 3
	tests := []struct {
		name  string
		cfg   Config
		cont  bool
		todos []Item
		want  []string // injected names until the turn ends ("" last)
	}{
		{"defaults: one correction, two continuations", Config{}, true, items("in_progress:a"),
			[]string{NameCompletionReminder, NameContinuation, NameContinuation, ""}},
		{"continuation off", Config{}, false, items("in_progress:a"), []string{NameCompletionReminder, ""}},
		{"cap of three", Config{FinalizationMaxCorrections: &three}, false, items("pending:a"),
			[]string{NameCompletionReminder, NameCompletionReminder, NameCompletionReminder, ""}},
		{"escalation", Config{FinalizationEscalation: true}, true, items("in_progress:a"),
			[]string{NameCompletionReminder, NameBlocked, ""}},
		{"all finished ends at once", Config{}, true, items("completed:a", "cancelled:b"), []string{""}},
		{"blocked only: guard yes, continuation no", Config{}, true, items("blocked:a"), []string{NameCompletionReminder, ""}},
		{"empty list", Config{}, true, nil, []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tt.cfg.Resolve(false)
			if err != nil {
				t.Fatal(err)
			}
			st := &State{Todos: tt.todos}
			NewUserMessage(st)
			var got []string
			for range 10 {
				in := EndOfTurn(st, s, tt.cont, nil)
				got = append(got, in.Name)
				if in.None() {
					break
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestContinuationWording(t *testing.T) {
	off := 0
	s, _ := Config{FinalizationMaxCorrections: &off}.Resolve(false)
	st := &State{Todos: items("completed:a", "pending:Write tests", "pending:c")}
	first := EndOfTurn(st, s, true, nil)
	if first.Name != NameContinuation || !strings.Contains(first.Text, "Write tests") || strings.Contains(first.Text, "not changed") {
		t.Errorf("first = %+v", first)
	}
	second := EndOfTurn(st, s, true, nil)
	if !strings.Contains(second.Text, "not changed") {
		t.Errorf("second, list unchanged, is not firmer: %+v", second)
	}
	st = &State{Todos: items("in_progress:a", "pending:b")}
	EndOfTurn(st, s, true, nil)
	st.Todos = items("completed:a", "in_progress:b")
	if in := EndOfTurn(st, s, true, nil); strings.Contains(in.Text, "not changed") || !strings.Contains(in.Text, ": b") {
		t.Errorf("second, list changed, = %+v", in)
	}
	// A new user message resets the cap.
	if !EndOfTurn(st, s, true, nil).None() {
		t.Error("third continuation")
	}
	NewUserMessage(st)
	if EndOfTurn(st, s, true, nil).None() {
		t.Error("no continuation after a new user message")
	}
}

func TestPlanStepsCountForTheGuard(t *testing.T) {
	st := &State{}
	in := EndOfTurn(st, defaults(), true, []string{"Review results"})
	if in.Name != NameCompletionReminder || !strings.Contains(in.Text, "Review results") {
		t.Errorf("got %+v", in)
	}
}

func TestPausedAndSuppressedStaySilent(t *testing.T) {
	for name, st := range map[string]*State{
		"paused":     {Todos: items("in_progress:a"), Paused: true},
		"suppressed": {Todos: items("in_progress:a"), GuardSuppressed: true},
	} {
		if in := EndOfTurn(st, defaults(), true, nil); !in.None() {
			t.Errorf("%s: end of turn injected %+v", name, in)
		}
		for range 5 {
			if in := AfterTools(st, defaults(), []string{"x"}); !in.None() {
				t.Errorf("%s: stale reminder %+v", name, in)
			}
		}
	}
}

func TestContextReminder(t *testing.T) {
	st := &State{Todos: items("in_progress:a")}
	s := defaults()
	if in := ContextReminder(st, s, false, false); in.Name != NameReminder || !strings.Contains(in.Text, "- [in_progress] a") {
		t.Errorf("got %+v", in)
	}
	for _, c := range [][2]bool{{true, false}, {false, true}} {
		if !ContextReminder(st, s, c[0], c[1]).None() {
			t.Errorf("reminded with write=%v reminder=%v in view", c[0], c[1])
		}
	}
	if !ContextReminder(&State{}, s, false, false).None() {
		t.Error("reminded of an empty list")
	}
}

func TestWindow(t *testing.T) {
	tool := func(idx ...int) func(int) bool {
		return func(i int) bool {
			for _, j := range idx {
				if i == j {
					return true
				}
			}
			return false
		}
	}
	tests := []struct {
		name       string
		n, max     int
		toolResult func(int) bool
		want       int
	}{
		{"no window", 20, 0, tool(), 2},
		{"fits", 6, 4, tool(), 2},
		{"tail", 20, 4, tool(), 16},
		{"moves back over tool results", 20, 4, tool(15, 16), 14},
		{"never into the head", 6, 1, tool(3, 4, 5), 2},
		{"tiny transcript", 1, 3, tool(), 1},
	}
	for _, tt := range tests {
		if got := Window(tt.n, tt.max, tt.toolResult); got != tt.want {
			t.Errorf("%s: Window = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// todo_finalization_correction is true from the completion reminder until the
// turn ends, then null again (cubepi's reset value), whichever way the turn
// ends.
func TestFinalizationCorrectionResetsWhenTheTurnEnds(t *testing.T) {
	esc, _ := Config{FinalizationEscalation: true}.Resolve(false)
	tests := []struct {
		name string
		s    Settings
		// after the reminder: the steps of the rest of the turn, each
		// returning whether the turn is still going on
		rest []func(*State) bool
	}{
		{"list completed, turn ends", defaults(), []func(*State) bool{
			func(st *State) bool {
				st.Todos = items("completed:a")
				return !EndOfTurn(st, defaults(), true, nil).None()
			},
		}},
		{"continuations keep it, the end clears it", defaults(), []func(*State) bool{
			func(st *State) bool { return !EndOfTurn(st, defaults(), true, nil).None() }, // continuation 1
			func(st *State) bool { return !EndOfTurn(st, defaults(), true, nil).None() }, // continuation 2
			func(st *State) bool { return !EndOfTurn(st, defaults(), true, nil).None() }, // the end
		}},
		{"escalation keeps it, the explanation ends the turn", esc, []func(*State) bool{
			func(st *State) bool { return !EndOfTurn(st, esc, true, nil).None() }, // todo_blocked
			func(st *State) bool { return !EndOfTurn(st, esc, true, nil).None() }, // the explanation
		}},
		{"a tool response keeps it", defaults(), []func(*State) bool{
			func(st *State) bool { AfterTools(st, defaults(), []string{"read_file"}); return true },
		}},
		{"todo_pause ends the turn", defaults(), []func(*State) bool{
			func(st *State) bool {
				Apply(st, []Call{{Name: ToolPause, Args: []byte(`{"reason":"need a key"}`)}}, defaults())
				return false
			},
		}},
		{"TurnEnded (max_turns, a failed model call)", defaults(), []func(*State) bool{
			func(st *State) bool { TurnEnded(st); return false },
		}},
		{"a new user message", defaults(), []func(*State) bool{
			func(st *State) bool { NewUserMessage(st); return false },
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &State{Todos: items("in_progress:a")}
			NewUserMessage(st)
			if st.Extra().FinalizationCorrection != nil {
				t.Fatal("set before any reminder")
			}
			if in := EndOfTurn(st, tt.s, true, nil); in.Name != NameCompletionReminder {
				t.Fatalf("no reminder: %+v", in)
			}
			going := true
			for i, f := range tt.rest {
				if fc := st.Extra().FinalizationCorrection; fc == nil || !*fc {
					t.Fatalf("before step %d of the turn: %v, want true", i+1, fc)
				}
				going = f(st)
			}
			fc := st.Extra().FinalizationCorrection
			if going {
				if fc == nil || !*fc {
					t.Errorf("turn still going on: %v, want true", fc)
				}
				return
			}
			if fc != nil {
				t.Errorf("turn over: %v, want null", *fc)
			}
		})
	}
}

func TestFinalizationCorrectionNullWithoutReminder(t *testing.T) {
	st := &State{Todos: items("completed:a")}
	for range 2 {
		NewUserMessage(st)
		EndOfTurn(st, defaults(), true, nil)
		if st.FinalizationCorrection != nil {
			t.Fatalf("turn without a reminder: %v, want null", *st.FinalizationCorrection)
		}
	}
	// A carried false (older versions reset to false) reads as no reminder
	// and is null after the next turn boundary.
	f := false
	st.FinalizationCorrection = &f
	NewUserMessage(st)
	if st.FinalizationCorrection != nil {
		t.Errorf("carried false kept: %v", *st.FinalizationCorrection)
	}
}
