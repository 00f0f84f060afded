package transcript

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/todoflow/todoflow/model"
)

// sameMessages reports the first difference between two transcripts, without
// printing megabytes of content.
func sameMessages(got, want []model.Message) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d messages, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Content != w.Content {
			at := 0
			for at < min(len(g.Content), len(w.Content)) && g.Content[at] == w.Content[at] {
				at++
			}
			return fmt.Errorf("message %d: content of %d bytes differs from the %d bytes wanted at byte %d", i, len(g.Content), len(w.Content), at)
		}
		gj, _ := json.Marshal(g)
		wj, _ := json.Marshal(w)
		if string(gj) != string(wj) {
			return fmt.Errorf("message %d = %s, want %s", i, gj, wj)
		}
	}
	return nil
}

func TestMessagesPage(t *testing.T) {
	msg := func(n int) model.Message {
		return model.Message{Role: model.RoleTool, Content: strings.Repeat("z", n), ToolCalls: []model.ToolCall{}}
	}
	small := []model.Message{msg(1), msg(2), msg(3), msg(4), msg(5)}
	heavy := []model.Message{msg(200 << 10), msg(200 << 10), msg(200 << 10)}
	huge := []model.Message{msg(1), msg(3 << 20), msg(1)}
	tests := []struct {
		name          string
		msgs          []model.Message
		offset, limit int
		want          []model.Message
	}{
		{"all", small, 0, 0, small},
		{"offset", small, 2, 0, small[2:]},
		{"limit", small, 1, 2, small[1:3]},
		{"limit past the end", small, 3, 10, small[3:]},
		{"offset at the end", small, 5, 0, []model.Message{}},
		{"offset past the end", small, 9, 1, []model.Message{}},
		{"capped in bytes", heavy, 0, 0, heavy[:2]},
		{"capped in bytes with a limit", heavy, 1, 3, heavy[1:3]},
		{"one large message alone", huge, 1, 0, huge[1:2]},
		{"stops before a large message", huge, 0, 0, huge[:1]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MessagesPage(tt.msgs, tt.offset, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if got == nil {
				t.Error("nil page; the query must answer a JSON array")
			}
			if err := sameMessages(got, tt.want); err != nil {
				t.Error(err)
			}
		})
	}
	for _, args := range [][2]int{{-1, 0}, {0, -1}} {
		if _, err := MessagesPage(small, args[0], args[1]); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("(got %d, %d)", args[0], args[1])) {
			t.Errorf("MessagesPage(%d, %d) = %v, want an error naming the values", args[0], args[1], err)
		}
	}

	// A client that advances by what it got, and stops at an empty page,
	// reads everything.
	all := slices.Concat(small, heavy, huge, small)
	var got []model.Message
	for {
		page, err := MessagesPage(all, len(got), 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		got = append(got, page...)
	}
	if err := sameMessages(got, all); err != nil {
		t.Error(err)
	}
}
