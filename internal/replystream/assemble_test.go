package replystream

import (
	"strings"
	"testing"
)

func TestAssembledApply(t *testing.T) {
	long := strings.Repeat("x", MaxBytes)
	tests := []struct {
		name     string
		frames   []Frame
		text     string
		cut      int
		end      bool
		wantCall int
	}{
		{"in order", []Frame{{Call: 2, At: 0, Text: "The "}, {Call: 2, At: 4, Text: "fix"}}, "The fix", 0, false, 2},
		{"a tail sent again", []Frame{{At: 0, Text: "The fix"}, {At: 4, Text: "fix is in"}}, "The fix is in", 0, false, 0},
		{"a gap: the frame's text alone", []Frame{{At: 0, Text: "The"}, {At: 100, Text: "end"}}, "end", 100, false, 0},
		{"the end", []Frame{{At: 0, Text: "Done."}, {At: 5, End: true}}, "Done.", 0, true, 0},
		{"kept to MaxBytes", []Frame{{At: 0, Text: "é" + long}}, long, 2, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a Assembled
			for _, f := range tt.frames {
				a.Apply(f)
			}
			if a.Text != tt.text || a.Cut != tt.cut || a.End != tt.end || a.Call != tt.wantCall {
				t.Errorf("got %q (%d bytes) cut %d end %v call %d; want %d bytes cut %d end %v call %d",
					shorten(a.Text), len(a.Text), a.Cut, a.End, a.Call, len(tt.text), tt.cut, tt.end, tt.wantCall)
			}
		})
	}
}

func shorten(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
