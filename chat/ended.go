package chat

import (
	"context"
	"fmt"
	"time"

	"github.com/todoflow/todoflow/client"
)

// EndedError is Run's error when the session ended other than completed
// (failed, terminated, timed out, cancelled) while the client showed it:
// the client has printed why, and a script that drives `starter chat`
// must not take the end of a session for its success.
type EndedError struct {
	ID     string
	Status string // client.Run*: how the run ended
	Reason string // why, as the server keeps it; "" when it could not be read
}

func (e *EndedError) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("session %s ended %s", e.ID, e.Status)
	}
	return fmt.Sprintf("session %s ended %s: %s", e.ID, e.Status, e.Reason)
}

// ending is the line that tells how the session ended, with why when it
// did not complete, and Run's error then. A failure's reason is in the
// run's result, which the watch does not read: one more call, once.
func (s *session) ending(ctx context.Context, status string) (string, error) {
	line := "The session has ended (" + status + ")"
	if status == client.RunCompleted {
		return line + ".", nil
	}
	e := &EndedError{ID: s.id, Status: status}
	if s.s != nil {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		// A Wait that fails (the server is away) leaves the reason
		// unknown; the end is still an end.
		if _, err := s.s.Wait(ctx); err != nil && ctx.Err() == nil {
			e.Reason = client.Why(err)
		}
	}
	if e.Reason == "" {
		return line + ".", e
	}
	return line + ": " + e.Reason, e
}
