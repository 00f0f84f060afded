package todo

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSpawnRefusal(t *testing.T) {
	tests := []struct {
		depth, spawned int
		want           string // a part of the refusal, "" for none
	}{
		{0, 0, ""},
		{MaxTreeDepth - 1, MaxSubagents - 1, ""},
		{MaxTreeDepth, 0, "cannot spawn"},
		{MaxTreeDepth + 1, 0, "cannot spawn"},
		{0, MaxSubagents, fmt.Sprintf("%d subagents running", MaxSubagents)},
	}
	for _, tt := range tests {
		got := SpawnRefusal(tt.depth, tt.spawned)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("SpawnRefusal(%d, %d) = %q, want %q", tt.depth, tt.spawned, got, tt.want)
		}
	}
}

func TestParseWriteRefusesALongList(t *testing.T) {
	items := make([]map[string]string, MaxItems+1)
	for i := range items {
		items[i] = map[string]string{"content": fmt.Sprint("item ", i), "status": "pending"}
	}
	for _, n := range []int{MaxItems, MaxItems + 1} {
		args, _ := json.Marshal(map[string]any{"todos": items[:n]})
		_, err := ParseWrite(args)
		if n <= MaxItems && err != nil {
			t.Errorf("%d items: %v", n, err)
		}
		if n > MaxItems && (err == nil || !strings.Contains(err.Error(), fmt.Sprintf("at most %d", MaxItems))) {
			t.Errorf("%d items: err = %v, want the cap named", n, err)
		}
	}
}

func TestCutMessage(t *testing.T) {
	long := strings.Repeat("é", 100<<10) // 2 bytes a rune: a cut can fall inside one
	tests := []struct {
		name     string
		text     string
		room     int
		wantSame bool
	}{
		{"fits", "hello", 5, true},
		{"fits a full message", strings.Repeat("x", MaxMessageBytes), MaxMessageBytes, true},
		{"one byte over", strings.Repeat("x", MaxMessageBytes+1), MaxMessageBytes, false},
		{"cut inside a rune", long, 1001, false},
		{"no room but the note", long, 10, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CutMessage(tt.text, tt.room)
			if tt.wantSame {
				if got != tt.text {
					t.Errorf("CutMessage changed a message that fits")
				}
				return
			}
			head, note, ok := strings.Cut(got, "\n\n[This message was ")
			switch {
			case !ok:
				t.Fatalf("CutMessage(%d bytes, %d) = %.80q…: no note", len(tt.text), tt.room, got)
			case !strings.HasPrefix(tt.text, head):
				t.Errorf("the kept part is not the message's head")
			case !utf8.ValidString(got):
				t.Errorf("the cut message is not valid UTF-8")
			case !strings.Contains(note, fmt.Sprintf("%d bytes; only its first %d were kept", len(tt.text), len(head))):
				t.Errorf("the note %q does not say what was kept", note)
			case len(head) > 0 && len(got) > tt.room:
				t.Errorf("CutMessage(%d bytes, %d) is %d bytes", len(tt.text), tt.room, len(got))
			}
		})
	}
}
