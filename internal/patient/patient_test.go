package patient

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
)

// lateClient answers queries with errs, one a call, then with answer.
type lateClient struct {
	client.Client
	errs  []error
	calls int
}

func (c *lateClient) QueryWorkflow(context.Context, string, string, string, ...any) (converter.EncodedValue, error) {
	c.calls++
	if len(c.errs) > 0 {
		err := c.errs[0]
		c.errs = c.errs[1:]
		return nil, err
	}
	return answer(`"the state"`), nil
}

type answer string

func (v answer) HasValue() bool    { return true }
func (v answer) Get(ptr any) error { return json.Unmarshal([]byte(v), ptr) }

func TestQuery(t *testing.T) {
	late := serviceerror.NewDeadlineExceeded("query timed out before a worker could process it")
	for _, tt := range []struct {
		name      string
		errs      []error
		wantCalls int
		wantErr   bool
	}{
		{"answered", nil, 1, false},
		{"late twice, then answered", []error{late, serviceerror.NewUnavailable("server restarting")}, 3, false},
		{"the call's own deadline", []error{context.DeadlineExceeded}, 2, false},
		{"dropped by a server going down", []error{serviceerror.NewCanceled("context canceled")}, 2, false},
		{"a server that restarted, before the workers poll again", []error{serviceerror.NewFailedPrecondition("no poller seen for task queue recently, worker may be down")}, 2, false},
		{"another precondition: not asked again", []error{serviceerror.NewFailedPrecondition("namespace is not active")}, 1, true},
		{"no such run: not asked again", []error{serviceerror.NewNotFound("workflow not found")}, 1, true},
		{"the query failed: not asked again", []error{serviceerror.NewQueryFailed("unknown queryType")}, 1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &lateClient{errs: tt.errs}
			v, err := Query(context.Background(), c, "wf", "", "state")
			if (err != nil) != tt.wantErr || c.calls != tt.wantCalls {
				t.Fatalf("error %v after %d calls; want error %v after %d", err, c.calls, tt.wantErr, tt.wantCalls)
			}
			if err == nil {
				var s string
				if err := v.Get(&s); err != nil || s != "the state" {
					t.Errorf("answer %q, %v", s, err)
				}
			}
		})
	}

	t.Run("gives up when its context ends", func(t *testing.T) {
		c := &lateClient{errs: []error{late, late, late, late, late, late}}
		ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := Query(ctx, c, "wf", "", "state")
		if !errors.As(err, new(*serviceerror.DeadlineExceeded)) || time.Since(start) > 3*time.Second {
			t.Errorf("error %v after %s; want the late answer's error once the context ended", err, time.Since(start))
		}
	})
}
