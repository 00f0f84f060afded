package script

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/todoflow/todoflow/model"
)

// Client answers model calls from scenario files. It is safe for concurrent
// use; the zero value is not, use New.
type Client struct {
	mu sync.Mutex
	// files is keyed by cleaned path. It is never pruned: a worker only
	// ever sees the handful of scenario files it is pointed at.
	files map[string]*cachedFile
	// reads counts file reads, so tests can see the cache at work.
	reads int
}

// cachedFile is one version of a scenario file, identified by its size and
// modification time, with the scripts parsed from it so far.
type cachedFile struct {
	size    int64
	modTime time.Time
	data    []byte
	scripts map[string]Script // by agent id, "" for the root agent
}

var _ model.Client = (*Client)(nil)

// New returns a Client with an empty cache.
func New() *Client {
	return &Client{files: make(map[string]*cachedFile)}
}

// Complete answers call req.Call with the matching response of the script
// named by req.Model ("<path>[#<agent_id>]"), after its delay_ms if any.
// Every error is a *model.Error; only an interrupted delay is retryable.
func (c *Client) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	path, agentID := SplitRef(req.Model)
	if path == "" {
		return model.Response{}, &model.Error{
			Message: fmt.Sprintf("script: no scenario file in model reference %q (use script:<path>[#<agent_id>])", req.Model),
		}
	}
	if req.Call < 1 {
		// Call numbers start at 1; anything else is a bug in the caller,
		// and answering it would hide that.
		return model.Response{}, &model.Error{
			Message: fmt.Sprintf("script: scenario file %s: call number %d, want 1 or more", path, req.Call),
		}
	}
	script, err := c.script(path, agentID)
	if err != nil {
		return model.Response{}, err
	}
	step := script.At(req.Call)

	// Without a stream the whole delay is one wait; with one, the text comes
	// in pieces spread over it, the last piece at its end.
	pieces := []string{""}
	if req.Stream != nil && step.Response.Content != "" {
		pieces = Chunks(step.Response.Content, StreamChunks)
	}
	start := time.Now()
	for i, piece := range pieces {
		due := step.Delay * time.Duration(i+1) / time.Duration(len(pieces))
		if err := sleep(ctx, due-time.Since(start)); err != nil {
			// Retryable: the scenario is fine, the attempt was cut short.
			return model.Response{}, &model.Error{
				Retryable: true,
				Message: fmt.Sprintf("script: scenario file %s: call %d interrupted during its delay_ms: %v",
					path, req.Call, err),
				Err: err,
			}
		}
		if piece != "" {
			req.Stream(piece)
		}
	}
	return cloneResponse(step.Response), nil
}

// StreamChunks is how many pieces a scripted reply is streamed in (fewer
// when it has fewer words).
const StreamChunks = 6

// Chunks cuts text into at most n pieces of about equal length, each ending
// after a space (or at the end), so that the pieces concatenated are text.
func Chunks(text string, n int) []string {
	if n <= 1 || text == "" {
		return []string{text}
	}
	var pieces []string
	rest := text
	for len(pieces) < n-1 && rest != "" {
		target := len(rest) / (n - len(pieces))
		// The first space at or after the target ends the piece; a piece
		// is at least one word, and the last one takes what is left.
		cut := strings.IndexByte(rest[min(target, len(rest)-1):], ' ')
		if cut < 0 {
			break
		}
		cut += min(target, len(rest)-1) + 1
		pieces = append(pieces, rest[:cut])
		rest = rest[cut:]
	}
	if rest != "" {
		pieces = append(pieces, rest)
	}
	return pieces
}

// sleep waits d, or returns the context's error when it ends first.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// script returns the parsed script of agentID in the file at path, from the
// cache when the file has not changed since it was read.
func (c *Client) script(path, agentID string) (Script, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fileError(path, err)
	}
	if fi.IsDir() {
		return nil, &model.Error{Message: fmt.Sprintf("script: scenario file %s: is a directory", path)}
	}

	// Reading and parsing under the lock keeps two calls from parsing the
	// same new file twice; it happens once per file version, so holding the
	// lock that long costs nothing worth a finer scheme.
	c.mu.Lock()
	defer c.mu.Unlock()

	key := filepath.Clean(path)
	f := c.files[key]
	if f == nil || f.size != fi.Size() || !f.modTime.Equal(fi.ModTime()) {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fileError(path, err)
		}
		c.reads++
		// The stat taken before the read identifies this version: a write
		// that lands in between changes the stat again, and the next call
		// reloads.
		f = &cachedFile{size: fi.Size(), modTime: fi.ModTime(), data: data, scripts: make(map[string]Script)}
		c.files[key] = f
	}

	if s, ok := f.scripts[agentID]; ok {
		return s, nil
	}
	s, err := Parse(f.data, agentID)
	if err != nil {
		return nil, &model.Error{Message: fmt.Sprintf("script: scenario file %s: %v", path, err), Err: err}
	}
	f.scripts[agentID] = s
	return s, nil
}

func fileError(path string, err error) *model.Error {
	reason := err
	// A PathError repeats the path; the message names it once already.
	var pe *fs.PathError
	if errors.As(err, &pe) {
		reason = pe.Err
	}
	return &model.Error{
		Message: fmt.Sprintf("script: cannot read scenario file %s: %v", path, reason),
		Err:     err,
	}
}

// cloneResponse copies a cached response so that a caller that modifies
// what it got cannot change the answer to a later or replayed call.
func cloneResponse(r model.Response) model.Response {
	out := r
	out.ToolCalls = make([]model.ToolCall, len(r.ToolCalls))
	for i, tc := range r.ToolCalls {
		tc.Arguments = slices.Clone(tc.Arguments)
		out.ToolCalls[i] = tc
	}
	return out
}
