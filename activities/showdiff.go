package activities

import (
	"fmt"
	"strings"
	"sync"

	"github.com/todoflow/todoflow/activities/tools"
	"github.com/todoflow/todoflow/internal/text"
)

// diffTaker keeps the diff a tool hands over (tools.Env.ShowDiff), from any
// goroutine; the last one counts.
type diffTaker struct {
	mu   sync.Mutex
	diff string
}

func (d *diffTaker) show(diff string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.diff = diff
}

// bounded is the diff taken, as valid UTF-8 and at most MaxDiffBytes: cut
// after its last whole line that fits, with a note.
func (d *diffTaker) bounded() string {
	d.mu.Lock()
	diff := strings.ToValidUTF8(d.diff, "\uFFFD")
	d.mu.Unlock()
	if len(diff) <= tools.MaxDiffBytes {
		return diff
	}
	const room = 100 // for the note
	kept := diff[:text.CutIndex(diff, tools.MaxDiffBytes-room)]
	if i := strings.LastIndexByte(kept, '\n'); i > 0 {
		kept = kept[:i]
	}
	return kept + fmt.Sprintf("\n\\ %d more bytes of the diff not shown", len(diff)-len(kept))
}
