package todo

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
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
