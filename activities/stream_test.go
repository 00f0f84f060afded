package activities

import (
	"context"
	"strings"
	"sync"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/todoflow/todoflow/model"
)

// The stream heartbeats the text as it grows, every time, each text a
// prefix of the next, whoever records it (a piece arriving or the
// keep-alive ticker).
func TestReplyStream(t *testing.T) {
	var mu sync.Mutex
	var got []ReplyStream
	s := &replyStream{head: ReplyStream{AgentID: "main", Turn: 2, Call: 5}, record: func(d ReplyStream) {
		mu.Lock()
		got = append(got, d)
		mu.Unlock()
	}}
	pieces := []string{"The fix ", "is in ", "auth.go."}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 50 {
			s.beat()
		}
	}()
	for _, p := range pieces {
		s.add(p)
	}
	wg.Wait()
	s.beat()
	mu.Lock()
	defer mu.Unlock()
	prev := ""
	for _, d := range got {
		if d.AgentID != "main" || d.Turn != 2 || d.Call != 5 {
			t.Errorf("details %+v do not name the call", d)
		}
		if !strings.HasPrefix(d.Text, prev) {
			t.Errorf("text %q recorded after %q", d.Text, prev)
		}
		prev = d.Text
	}
	if prev != strings.Join(pieces, "") {
		t.Errorf("last text %q, want the whole reply", prev)
	}
}

func TestReplyStreamDetailsCut(t *testing.T) {
	s := &replyStream{}
	s.text.WriteString("é" + strings.Repeat("x", MaxStreamBytes))
	d := s.details()
	if len(d.Text) != MaxStreamBytes || d.Cut != 2 {
		t.Errorf("details: %d bytes, cut %d; want %d and 2 (the é whole)", len(d.Text), d.Cut, MaxStreamBytes)
	}
	s.text.Reset()
	s.text.WriteString("short")
	if d := s.details(); d.Text != "short" || d.Cut != 0 {
		t.Errorf("details of a short text: %+v", d)
	}
}

// streamingModel streams its reply in the pieces given.
type streamingModel struct {
	recordingModel
	pieces []string
}

func (m *streamingModel) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	if req.Stream != nil {
		for _, p := range m.pieces {
			req.Stream(p)
		}
	}
	return m.recordingModel.Complete(ctx, req)
}

// CallModel's heartbeats carry a ReplyStream that names the call, from the
// reply's first piece on; a call that streams nothing and ends within the
// heartbeat interval (a summary here) records none, since each costs an RPC
// and a write of the run's state on the server. (The test environment
// holds later heartbeats for its default throttle interval; testsuite's
// end-to-end test watches the text grow on a server.)
func TestCallModelHeartbeatsReplyStream(t *testing.T) {
	m := &streamingModel{pieces: []string{"Hel", "lo"}}
	a := &Activities{Models: func(string) (model.Client, string, error) { return m, "m", nil }}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	var mu sync.Mutex
	var beats []ReplyStream
	env.SetOnActivityHeartbeatListener(func(_ *activity.Info, details converter.EncodedValues) {
		var d ReplyStream
		if err := details.Get(&d); err != nil {
			t.Errorf("heartbeat details are no ReplyStream: %v", err)
		}
		mu.Lock()
		beats = append(beats, d)
		mu.Unlock()
	})
	for _, sum := range []*Summarize{nil, {Instructions: "Summarise."}} {
		if _, err := env.ExecuteActivity(a.CallModel, CallModelInput{AgentID: "coder", Turn: 1, Call: 3, Model: "x:y", Summarize: sum,
			Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(beats) != 1 || beats[0] != (ReplyStream{AgentID: "coder", Turn: 1, Call: 3, Text: "Hel"}) {
		t.Errorf("heartbeats %+v, want one with the first piece, naming the call", beats)
	}
	if m.reqs[0].Stream == nil || m.reqs[1].Stream != nil {
		t.Errorf("Stream set: reply %v, summary %v; want the reply's only", m.reqs[0].Stream != nil, m.reqs[1].Stream != nil)
	}
}
