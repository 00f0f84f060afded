package activities

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/todoflow/todoflow/activities/tools"
	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/todoflow/todoflow/model"
)

// What a tool says of its progress goes out with the heartbeat. (The
// test environment sends only an attempt's first heartbeat, since its
// throttle interval is the SDK's default; TestToolBeat sees the rest.)
func TestRunToolProgress(t *testing.T) {
	defer func(d time.Duration) { heartbeatEvery = d }(heartbeatEvery)
	heartbeatEvery = 20 * time.Millisecond
	// The tool works until a heartbeat went out (the minute is only a
	// hang's bound), so the beat is seen however slow the machine.
	beaten := make(chan struct{})
	var once sync.Once
	reg := tools.NewRegistry(tools.New(model.ToolSpec{Name: "import"}, func(_ context.Context, env tools.Env, _ json.RawMessage) (string, error) {
		env.Progress(tools.Progress{Progress: 1, Total: 4, Message: "reading"})
		select {
		case <-beaten:
		case <-time.After(time.Minute):
		}
		return "imported", nil
	}))
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	var mu sync.Mutex
	var beats []api.ToolProgress
	env.SetOnActivityHeartbeatListener(func(_ *activity.Info, details converter.EncodedValues) {
		var d api.ToolProgress
		if err := details.Get(&d); err != nil {
			t.Error(err)
		}
		mu.Lock()
		beats = append(beats, d)
		mu.Unlock()
		once.Do(func() { close(beaten) })
	})
	a := &Activities{StateDir: t.TempDir(), Tools: reg}
	env.RegisterActivity(a)
	if _, err := env.ExecuteActivity(a.RunTool, RunToolInput{WorkflowID: "wf", Call: toolCall("import", `{}`)}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := api.ToolProgress{Tool: "import", Progress: 1, Total: 4, Message: "reading"}
	if len(beats) == 0 || beats[0] != want {
		t.Errorf("heartbeats %+v, want the first to be %+v", beats, want)
	}
}

// The details carry the latest report, a message cut between characters,
// and, once recorded, Unsent; a report JSON cannot carry is dropped.
func TestToolBeat(t *testing.T) {
	var got []api.ToolProgress
	b := &toolBeat{d: api.ToolProgress{Tool: "import"}, record: func(d any) { got = append(got, d.(api.ToolProgress)) }}
	b.beat()
	b.progress(tools.Progress{Progress: 3, Total: 4, Message: "writing " + strings.Repeat("é", 300)})
	b.beat()
	b.progress(tools.Progress{Progress: math.NaN()})
	b.progress(tools.Progress{Progress: 5, Total: math.Inf(1)})
	b.unsent(2)
	b.beat()
	if len(got) != 4 {
		t.Fatalf("%d heartbeats recorded, want 4: %+v", len(got), got)
	}
	if got[0] != (api.ToolProgress{Tool: "import"}) {
		t.Errorf("first beat %+v", got[0])
	}
	if m := got[1].Message; got[1].Progress != 3 || len(m) > MaxProgressMessage || !utf8.ValidString(m) || !strings.HasSuffix(m, "é…") {
		t.Errorf("second beat %+v: want progress 3 and the message cut to %d bytes between characters", got[1], MaxProgressMessage)
	}
	for _, d := range got[2:] {
		if d.Progress != 3 || d.Unsent != 2 {
			t.Errorf("beat after unsent(2) %+v: want progress 3 (NaN and Inf dropped) and Unsent 2", d)
		}
	}
	if _, err := json.Marshal(got); err != nil {
		t.Error(err)
	}
}
