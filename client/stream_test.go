package client

import (
	"testing"

	"github.com/todoflow/todoflow/internal/replystream"
)

// Watch shows whichever is further along: the heartbeat's preview or the
// followed stream; nothing of a stream while no model call runs.
func TestStreamNow(t *testing.T) {
	tests := []struct {
		name    string
		preview StreamChanged
		live    *replystream.Assembled // nil: no frame came
		want    StreamChanged
	}{
		{"preview only", StreamChanged{Running: true, Call: 2, Text: "The fix"}, nil,
			StreamChanged{Running: true, Call: 2, Text: "The fix"}},
		{"the stream, further along", StreamChanged{Running: true, Call: 2, Text: "The fix"}, &replystream.Assembled{Call: 2, Text: "The fix is in"},
			StreamChanged{Running: true, Call: 2, Text: "The fix is in"}},
		{"the stream before any heartbeat", StreamChanged{Running: true}, &replystream.Assembled{Call: 3, Text: "T"},
			StreamChanged{Running: true, Call: 3, Text: "T"}},
		{"a stream that lags (it reconnected)", StreamChanged{Running: true, Call: 2, Text: "The fix is in"}, &replystream.Assembled{Call: 2, Text: "The"},
			StreamChanged{Running: true, Call: 2, Text: "The fix is in"}},
		{"a long reply, counted from its start", StreamChanged{Running: true, Call: 2, Text: "tail", Cut: 100}, &replystream.Assembled{Call: 2, Text: "the longer tail", Cut: 95},
			StreamChanged{Running: true, Call: 2, Text: "the longer tail", Cut: 95}},
		{"no call runs", StreamChanged{}, &replystream.Assembled{Call: 2, Text: "stale"}, StreamChanged{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &watcher{preview: tt.preview}
			if tt.live != nil {
				w.live = &liveStream{reply: *tt.live, got: true}
			}
			if got := w.streamNow(); got != tt.want {
				t.Errorf("streamNow() = %+v, want %+v", got, tt.want)
			}
		})
	}
}
