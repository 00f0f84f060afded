package activities

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/todoflow/todoflow/model"
)

func TestShorten(t *testing.T) {
	tests := []struct {
		name     string
		lens     []int
		maxBytes int
		// whole are the pieces that must stay as they are.
		whole []int
	}{
		{"fits", []int{100, 200}, 300, []int{0, 1}},
		{"one huge", []int{100, 50_000, 120}, 10_000, []int{0, 2}},
		{"two huge", []int{30_000, 80, 40_000}, 10_000, []int{1}},
		{"all equal", []int{5_000, 5_000, 5_000}, 6_000, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pieces := make([]string, len(tt.lens))
			for i, n := range tt.lens {
				// Multi-byte runes, so that a cut inside one would show.
				pieces[i] = "start " + strings.Repeat("é", (n-10)/2) + " end"
			}
			got := shorten(pieces, tt.maxBytes)
			total := 0
			for i, p := range got {
				total += len(p)
				if !utf8.ValidString(p) {
					t.Errorf("piece %d is not valid UTF-8 after the cut", i)
				}
				cut := strings.Contains(p, "left out")
				if isWhole := slices.Contains(tt.whole, i); isWhole && p != pieces[i] || !isWhole && !cut {
					t.Errorf("piece %d (%d bytes): cut %v, want whole %v", i, len(pieces[i]), cut, isWhole)
				}
				if cut && (!strings.HasPrefix(p, "start ") || !strings.HasSuffix(p, " end")) {
					t.Errorf("piece %d lost its beginning or its end: %.40q…", i, p)
				}
			}
			if total > tt.maxBytes {
				t.Errorf("%d bytes after shorten, want at most %d", total, tt.maxBytes)
			}
		})
	}
}

func TestSummarizeRequest(t *testing.T) {
	msgs := []model.Message{
		{Role: model.RoleUser, Content: "read the log"},
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c", Name: "read_file", Arguments: []byte(`{"path":"log"}`)}}},
		{Role: model.RoleTool, ToolCallID: "c", Content: strings.Repeat("line\n", 100_000)},
	}
	req := (&Summarize{Instructions: "Summarise.", Previous: "The user wants the log read.", MaxBytes: 20_000}).request(msgs)
	if len(req) != 2 || req[0].Content != "Summarise." {
		t.Fatalf("request = %+v", req)
	}
	text := req[1].Content
	for _, want := range []string{"The summary so far", "The user wants the log read.", "read the log", "(calls read_file", "left out"} {
		if !strings.Contains(text, want) {
			t.Errorf("the request does not contain %q", want)
		}
	}
	if len(text) > 21_000 {
		t.Errorf("the request has %d bytes; the conversation was to be cut to 20000", len(text))
	}
	// Without a limit nothing is cut, and a first part has no summary so far.
	req = (&Summarize{Instructions: "Summarise."}).request(msgs)
	if strings.Contains(req[1].Content, "left out") || strings.Contains(req[1].Content, "so far") || len(req[1].Content) < 500_000 {
		t.Errorf("an unbounded first part was changed: %d bytes", len(req[1].Content))
	}
}
