package chat

import "testing"

// Ctrl+R finds the newest line holding the query, in any case; Ctrl+R
// again an older one, keeping the one found when there is none; erasing
// searches again from the newest.
func TestSearch(t *testing.T) {
	lines := []string{"fix the auth test", "/plan", "run the Auth suite", "hello"}
	var s search
	s.start("half typed", lines)
	steps := []struct {
		name   string
		do     func() (string, bool)
		want   string
		wantOK bool
		at     int
	}{
		{"a", func() (string, bool) { return s.typed("a", lines) }, "run the Auth suite", true, 2},
		{"au, any case", func() (string, bool) { return s.typed("u", lines) }, "run the Auth suite", true, 2},
		{"Ctrl+R: older", func() (string, bool) { return s.older(lines) }, "fix the auth test", true, 0},
		{"Ctrl+R past the oldest", func() (string, bool) { return s.older(lines) }, "", false, 0},
		{"a query no line holds", func() (string, bool) { return s.typed("x", lines) }, "", false, 0},
		{"erase: from the newest", func() (string, bool) { return s.erase(lines) }, "run the Auth suite", true, 2},
	}
	for _, st := range steps {
		got, ok := st.do()
		if got != st.want || ok != st.wantOK || s.at != st.at {
			t.Errorf("%s: %q, %v at %d; want %q, %v at %d", st.name, got, ok, s.at, st.want, st.wantOK, st.at)
		}
	}
	if s.draft != "half typed" || s.query != "au" {
		t.Errorf("search state %+v, want the draft kept and the query au", s)
	}
}
