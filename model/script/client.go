package script

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	// dir is the only folder whose files it reads: the reference comes
	// from a run's input or from the model (a subagent's model), and
	// neither may make the worker read /dev/zero or a named pipe.
	dir string

	mu sync.Mutex
	// files is keyed by cleaned path inside dir. It is never pruned: a
	// worker only ever sees the handful of scenario files it is pointed at.
	files map[string]*cachedFile
	// reads counts file reads, so tests can see the cache at work.
	reads int
}

// MaxFileBytes is the largest scenario file a Client reads. The examples
// are a few KiB; the cap keeps a reference to a huge file from holding the
// worker's memory.
const MaxFileBytes = 4 << 20

// cachedFile is one version of a scenario file, identified by its size and
// modification time, with the scripts parsed from it so far.
type cachedFile struct {
	size    int64
	modTime time.Time
	data    []byte
	scripts map[string]Script // by agent id, "" for the root agent
}

var _ model.Client = (*Client)(nil)

// New returns a Client with an empty cache that reads the scenario files
// inside dir: a reference's path is relative to dir, or absolute inside it.
func New(dir string) *Client {
	return &Client{dir: filepath.Clean(dir), files: make(map[string]*cachedFile)}
}

// Dir returns the folder the client reads scenario files in.
func (c *Client) Dir() string { return c.dir }

// Complete answers call req.Call with the matching response of the script
// named by req.Model ("<path>[#<agent_id>]"), after its delay_ms if any; a
// summarising call (req.Summarize) gets the scenario's summary at once,
// whatever its req.Call.
// Every error is a *model.Error; only an interrupted delay is retryable.
func (c *Client) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	path, agentID := SplitRef(req.Model)
	if path == "" {
		return model.Response{}, &model.Error{
			Message: fmt.Sprintf("script: no scenario file in model reference %q (use script:<path>[#<agent_id>])", req.Model),
		}
	}
	if req.Call < 1 && !req.Summarize {
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
	if req.Summarize {
		// Compaction comes whenever the transcript outgrows its budget,
		// which depends on token estimates, not on the scenario: answering
		// it from the numbered responses would shift every later step.
		return script.SummaryResponse(), nil
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
// cache when the file has not changed since it was read. The lock is held
// only to look at and fill the cache, never during the file's I/O: a slow
// disk delays the calls of that file only.
func (c *Client) script(path, agentID string) (Script, error) {
	rel, err := c.inside(path)
	if err != nil {
		return Script{}, err
	}
	root, err := os.OpenRoot(c.dir)
	if err != nil {
		return Script{}, fileError(path, err)
	}
	defer root.Close()
	// Stat before opening: opening a named pipe would wait for a writer.
	// The os.Root follows links only as far as they stay inside dir.
	fi, err := root.Stat(rel)
	if err != nil {
		return Script{}, fileError(path, err)
	}
	if err := regular(path, fi); err != nil {
		return Script{}, err
	}

	c.mu.Lock()
	f := c.files[rel]
	if f != nil && (f.size != fi.Size() || !f.modTime.Equal(fi.ModTime())) {
		f = nil
	}
	if f != nil {
		s, ok := f.scripts[agentID]
		c.mu.Unlock()
		if ok {
			return s, nil
		}
	} else {
		c.mu.Unlock()
		data, err := readFile(root, rel, path)
		if err != nil {
			return Script{}, err
		}
		// The stat taken before the read identifies this version: a write
		// that lands in between changes the stat again, and the next call
		// reloads.
		f = &cachedFile{size: fi.Size(), modTime: fi.ModTime(), data: data, scripts: make(map[string]Script)}
		c.mu.Lock()
		c.reads++
		c.files[rel] = f
		c.mu.Unlock()
	}

	// Parsing happens outside the lock too; two calls may both parse a
	// new file once, and store the same script.
	s, err := Parse(f.data, agentID)
	if err != nil {
		return Script{}, &model.Error{Message: fmt.Sprintf("script: scenario file %s: %v", path, err), Err: err}
	}
	c.mu.Lock()
	f.scripts[agentID] = s
	c.mu.Unlock()
	return s, nil
}

// inside returns path relative to the client's folder, or an error when it
// leads out of it.
func (c *Client) inside(path string) (string, error) {
	rel := path
	if filepath.IsAbs(path) {
		var err error
		if rel, err = filepath.Rel(c.dir, filepath.Clean(path)); err != nil {
			rel = ".."
		}
	}
	if !filepath.IsLocal(rel) {
		return "", &model.Error{Message: fmt.Sprintf("script: scenario file %s is outside the folder this worker plays scenarios from (%s)", path, c.dir)}
	}
	return filepath.Clean(rel), nil
}

// regular refuses what is not a regular file of at most MaxFileBytes.
func regular(path string, fi fs.FileInfo) error {
	switch {
	case fi.IsDir():
		return &model.Error{Message: fmt.Sprintf("script: scenario file %s: is a directory", path)}
	case !fi.Mode().IsRegular():
		return &model.Error{Message: fmt.Sprintf("script: scenario file %s: is not a regular file", path)}
	case fi.Size() > MaxFileBytes:
		return &model.Error{Message: fmt.Sprintf("script: scenario file %s: is %d bytes, more than the %d a scenario may have", path, fi.Size(), MaxFileBytes)}
	}
	return nil
}

// readFile reads the scenario file rel of root, at most MaxFileBytes of it
// even if it grew since it was looked at.
func readFile(root *os.Root, rel, path string) ([]byte, error) {
	file, err := root.Open(rel)
	if err != nil {
		return nil, fileError(path, err)
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return nil, fileError(path, err)
	}
	if err := regular(path, fi); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(file, MaxFileBytes+1))
	if err != nil {
		return nil, fileError(path, err)
	}
	if len(data) > MaxFileBytes {
		return nil, &model.Error{Message: fmt.Sprintf("script: scenario file %s: is more than the %d bytes a scenario may have", path, MaxFileBytes)}
	}
	return data, nil
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
