package activities

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoflow/todoflow/api"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/todoflow/todoflow/internal/replystream"
	"github.com/todoflow/todoflow/model"
)

// streamingModel streams its reply in the pieces given, pausing before
// each piece that follows a "|" (which it does not send), until release is
// closed when it is set.
type streamingModel struct {
	answeringModel
	pieces  []string
	pause   time.Duration
	started chan activity.Info // the call's info, once it has written its first piece
	release chan struct{}
}

func (m *streamingModel) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	if req.Stream != nil {
		for i, p := range m.pieces {
			req.Stream(p)
			if i == 0 && m.started != nil {
				m.started <- activity.GetInfo(ctx)
				<-m.release
			}
			time.Sleep(m.pause)
		}
	}
	return m.answeringModel.Complete(ctx, req)
}

// beats runs CallModel on m in a test environment and returns the
// heartbeats it recorded.
func beats(t *testing.T, a *Activities, in CallModelInput) []api.ReplyStream {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	var mu sync.Mutex
	var got []api.ReplyStream
	env.SetOnActivityHeartbeatListener(func(_ *activity.Info, details converter.EncodedValues) {
		var d api.ReplyStream
		if err := details.Get(&d); err != nil {
			t.Errorf("heartbeat details are no ReplyStream: %v", err)
		}
		mu.Lock()
		got = append(got, d)
		mu.Unlock()
	})
	in.Messages = []model.Message{{Role: model.RoleUser, Content: "hi"}}
	if _, err := env.ExecuteActivity(a.CallModel, in); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return got
}

// The reply's pieces cost no heartbeat: a call that streams a hundred of
// them within its liveness interval records none.
func TestCallModelStreamsWithoutHeartbeats(t *testing.T) {
	defer func(d time.Duration) { heartbeatEvery = d }(heartbeatEvery)
	heartbeatEvery = time.Hour
	m := &streamingModel{pieces: strings.Split(strings.Repeat("word ", 100), " ")}
	a := &Activities{Models: func(string) (model.Client, string, error) { return m, "m", nil }}
	if got := beats(t, a, CallModelInput{AgentID: "coder", Turn: 1, Call: 3, Model: "x:y"}); len(got) != 0 {
		t.Errorf("%d heartbeats for a call shorter than its liveness interval, want none", len(got))
	}
	if m.reqs[0].Stream == nil {
		t.Error("the reply was not streamed")
	}
}

// The liveness heartbeats carry the reply so far, naming the call: the
// preview of the clients that cannot reach the worker.
func TestCallModelHeartbeatsCarryThePreview(t *testing.T) {
	defer func(d time.Duration) { heartbeatEvery = d }(heartbeatEvery)
	heartbeatEvery = 20 * time.Millisecond
	m := &streamingModel{pieces: []string{"The fix ", "is in ", "auth.go."}, pause: 100 * time.Millisecond}
	a := &Activities{Models: func(string) (model.Client, string, error) { return m, "m", nil }}
	got := beats(t, a, CallModelInput{AgentID: "coder", Turn: 1, Call: 3, Model: "x:y"})
	if len(got) == 0 {
		t.Fatal("no heartbeat from a call that ran over ten liveness intervals")
	}
	for _, d := range got {
		if d.AgentID != "coder" || d.Turn != 1 || d.Call != 3 || !strings.HasPrefix("The fix is in auth.go.", d.Text) {
			t.Errorf("heartbeat %+v: want the call named and a beginning of its reply", d)
		}
	}
}

// With a stream server, a running call's reply is served to a watcher as
// it is written, and the stream ends when the call does.
func TestCallModelServesItsReply(t *testing.T) {
	srv, err := replystream.Listen("127.0.0.1:0", replystream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	m := &streamingModel{pieces: []string{"Hel", "lo"}, started: make(chan activity.Info, 1), release: make(chan struct{})}
	a := &Activities{Models: func(string) (model.Client, string, error) { return m, "m", nil }, Streams: srv}
	done := make(chan []api.ReplyStream)
	go func() { done <- beats(t, a, CallModelInput{Call: 2, Model: "x:y"}) }()
	info := <-m.started
	k := replystream.Key{WorkflowID: info.WorkflowExecution.ID, RunID: info.WorkflowExecution.RunID, ActivityID: info.ActivityID}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var mu sync.Mutex
	var got replystream.Assembled
	followed := make(chan error)
	go func() {
		followed <- replystream.Follow(ctx, srv.URL(), k, nil, func(f replystream.Frame) {
			mu.Lock()
			defer mu.Unlock()
			got.Apply(f)
			if f.Text == "Hel" {
				close(m.release) // the watcher has the first piece while the call runs
			}
		})
	}()
	if err := <-followed; err != nil {
		t.Fatalf("following the call: %v", err)
	}
	<-done
	mu.Lock()
	defer mu.Unlock()
	if got.Text != "Hello" || got.Call != 2 || !got.End {
		t.Errorf("the watcher has %+v; want the whole reply of call 2, ended", got)
	}
	if err := replystream.Follow(ctx, srv.URL(), k, nil, func(replystream.Frame) {}); err != replystream.ErrEnded {
		t.Errorf("following the call after it ended: %v; want ErrEnded", err)
	}
}

// cutModel streams pieces, then writes on until its context ends, and
// fails as a model client does when its request is abandoned.
type cutModel struct {
	pieces  []string
	written chan struct{} // closed once the pieces are written
}

func (m *cutModel) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	for _, p := range m.pieces {
		req.Stream(p)
	}
	close(m.written)
	<-ctx.Done()
	return model.Response{}, &model.Error{Retryable: true, Message: "request abandoned: " + ctx.Err().Error(), Err: ctx.Err()}
}

// A call its run cancels (the user interrupted the turn) answers with the
// reply it had written, the run's to keep; one stopped by its worker's
// shutdown fails as before, for the server to retry.
func TestCallModelCancelledAnswersItsReplySoFar(t *testing.T) {
	tests := []struct {
		name  string
		cause error
		kept  bool
	}{
		{"cancelled by its run", temporal.NewCanceledError(), true},
		{"its worker shuts down", errors.New("worker is shutting down"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &cutModel{pieces: []string{"The fix ", "is in "}, written: make(chan struct{})}
			a := &Activities{Models: func(string) (model.Client, string, error) { return m, "m", nil }}
			ctx, cancel := context.WithCancelCause(context.Background())
			go func() {
				<-m.written
				cancel(tt.cause)
			}()
			_, err := a.CallModel(ctx, CallModelInput{AgentID: "main", Turn: 2, Call: 3, Model: "x:y",
				Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}})
			var ce *temporal.CanceledError
			if !tt.kept {
				if errors.As(err, &ce) || err == nil {
					t.Fatalf("CallModel = %v, want a failure to retry", err)
				}
				return
			}
			if !errors.As(err, &ce) || !ce.HasDetails() {
				t.Fatalf("CallModel = %v, want a cancellation with the reply so far", err)
			}
			var got api.ReplyStream
			if err := ce.Details(&got); err != nil {
				t.Fatal(err)
			}
			if want := (api.ReplyStream{AgentID: "main", Turn: 2, Call: 3, Text: "The fix is in "}); got != want {
				t.Errorf("the cancellation reports %+v, want %+v", got, want)
			}
		})
	}
}
