package chat

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	sdkclient "go.temporal.io/sdk/client"

	"github.com/todoflow/todoflow/client"
)

// acceptor is a Temporal client whose session takes updates after a delay
// that shrinks with each message, as a busy server might: a message sent
// on its own would overtake the ones before it.
type acceptor struct {
	sdkclient.Client
	mu    sync.Mutex
	taken []string
	delay time.Duration
}

func (a *acceptor) UpdateWorkflow(ctx context.Context, o sdkclient.UpdateWorkflowOptions) (sdkclient.WorkflowUpdateHandle, error) {
	a.mu.Lock()
	d := a.delay
	a.delay /= 2
	a.mu.Unlock()
	time.Sleep(d)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.taken = append(a.taken, o.Args[0].(string))
	return pending{}, nil
}

func (a *acceptor) got() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.taken)
}

// pending is an accepted update whose answer has not come.
type pending struct{ sdkclient.WorkflowUpdateHandle }

func (pending) RunID() string { return "run-1" }
func (pending) Get(ctx context.Context, _ any) error {
	<-ctx.Done()
	return sdkclient.NewWorkflowUpdateServiceTimeoutOrCanceledError(ctx.Err())
}

// Four lines typed fast reach the session in the order typed (they reached
// the transcript as m4 m1 m2 m3 when each was sent on its own).
func TestTypedLinesKeepOrder(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a := &acceptor{delay: 80 * time.Millisecond}
	s := client.New(a, client.Options{}).Session("chat-1")
	u := newUI(ctx, &session{s: s, id: s.ID()}, nil)
	want := []string{"m1", "m2", "m3", "m4"}
	for _, m := range want {
		u.input.SetValue(m)
		u.submit() // the commands it returns only wait for the replies
	}
	for len(a.got()) < len(want) && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	if got := a.got(); !slices.Equal(got, want) {
		t.Errorf("the session took %q, want %q", got, want)
	}
}
