package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/todoflow/todoflow/activities/tools"
	"github.com/todoflow/todoflow/model"
)

// server is one configured MCP server and, while it runs, the session with
// it. It is the tools.Source of the server's tools.
type server struct {
	name   string
	prefix string
	cfg    Server
	dir    string
	opts   Options
	// stopping is done when the worker stops: a start under way gives up.
	stopping context.Context

	// stale is set when the server says its tools changed. It is atomic,
	// not under mu, because the SDK calls the handler that sets it from
	// the session's reader, which a listing under mu may be waiting on.
	stale atomic.Bool
	// progress holds, by progress token, what takes the progress of a call
	// that runs (see call); the SDK calls onProgress from the session's
	// reader.
	progress  sync.Map // string → func(tools.Progress)
	lastToken atomic.Int64

	mu      sync.Mutex
	session *sdk.ClientSession // nil while the server is not running
	tools   []tools.Tool       // of the latest listing; nil before the first
	redact  *strings.Replacer  // puts the references back in place of the values they gave
	closed  bool
	// Before a first listing succeeds, failed starts are not tried again
	// by Tools until retryAt (see listBackoff): every model call would
	// otherwise wait for a server that hangs while starting.
	failures int
	retryAt  time.Time
	lastErr  error
}

// listBackoff is how long Tools waits, after failed starts, before it
// starts a server that was never listed again: 15 s after the first
// failure, doubling up to 10 minutes. Meanwhile its tools are not offered
// (and a call by a name the model guessed fails at once, retryably).
func listBackoff(failures int) time.Duration {
	return min(15*time.Second<<min(failures-1, 6), 10*time.Minute)
}

func (s *server) Prefix() string { return s.prefix }

// Tools returns the server's tools, starting it to list them the first time
// and listing them again when the server said they changed. Once listed,
// the tools stay offered while the server is down: a call starts it again.
func (s *server) Tools(ctx context.Context) ([]tools.Tool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tools != nil && !s.stale.Load() {
		return s.tools, nil
	}
	if s.tools == nil && s.session == nil && time.Now().Before(s.retryAt) {
		return nil, s.lastErr
	}
	var err error
	if s.session != nil {
		if err = s.listLocked(ctx, s.session); err == nil {
			return s.tools, nil
		}
		s.dropLocked(s.session)
	}
	if _, err = s.connectLocked(ctx); err == nil {
		return s.tools, nil
	}
	if s.tools != nil {
		s.opts.Logger.Warn("MCP server's tools may have changed but cannot be listed; offering the earlier list", "server", s.name, "error", err)
		return s.tools, nil
	}
	s.failures++
	wait := listBackoff(s.failures)
	s.retryAt, s.lastErr = time.Now().Add(wait), err
	s.opts.Logger.Warn("MCP server cannot be started; its tools are not offered", "server", s.name, "error", err, "next_try_in", wait)
	return nil, err
}

// call calls the server's tool remote with args (a JSON object); progress,
// when not nil, takes the server's progress notifications for the call.
// What the model can act on (a JSON-RPC error, isError) is a plain error; a
// server that cannot be reached is tools.Unsent, one that broke off after
// the request may have reached it (wire.go) tools.Retryable, which RunTool
// sends again only as the tool's hints allow.
func (s *server) call(ctx context.Context, remote string, args json.RawMessage, progress func(tools.Progress)) (string, error) {
	s.mu.Lock()
	cs, err := s.connectLocked(ctx)
	s.mu.Unlock()
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", tools.Unsent(err)
	}
	params := &sdk.CallToolParams{Name: remote, Arguments: args}
	if progress != nil {
		token := fmt.Sprintf("todoflow-%d", s.lastToken.Add(1))
		s.progress.Store(token, progress)
		defer s.progress.Delete(token)
		params.SetProgressToken(token)
	}
	note := &wireNote{}
	res, err := cs.CallTool(withNote(ctx, note), params)
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if rpc, ok := errors.AsType[*jsonrpc.Error](err); ok && rpc.Code != codeRejected {
			return "", fmt.Errorf("MCP server %s refused the call: %s", s.name, s.hide(rpc.Message))
		}
		// Below the protocol: the session cannot be trusted any more.
		s.mu.Lock()
		s.dropLocked(cs)
		err = s.flatLocked("call "+remote, err)
		s.mu.Unlock()
		if !note.mayHaveArrived() {
			return "", tools.Unsent(err)
		}
		return "", tools.Retryable(err)
	}
	text, err := result(res)
	if err != nil {
		return "", errors.New(s.hide(err.Error()))
	}
	return text, nil
}

// result is what the model reads of a call's result: its text, or an error
// tool message when the server said the tool failed.
func result(res *sdk.CallToolResult) (string, error) {
	text := resultText(res)
	if res.IsError {
		if strings.TrimSpace(text) == "" {
			text = "the tool reported an error without a message"
		}
		return "", errors.New(text)
	}
	return text, nil
}

// hide puts the references of the server's configuration back in place of
// the values they gave, in an error text of the server's: a server that
// passes on a refusal quoting the token it was given must not bring the
// token into the run's history. (A result is the tool's answer, as the
// server meant it, and is left as it is.)
func (s *server) hide(text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hideLocked(text)
}

func (s *server) hideLocked(text string) string {
	if s.redact == nil {
		return text
	}
	return s.redact.Replace(text)
}

// codeRejected is the code of the JSON-RPC error the SDK's transports wrap
// around a request that failed below the protocol (an HTTP server that is
// down, a 502 or 503 on the way): not the server's answer, so not the
// model's to act on. It does not prove that the request was not sent (the
// SDK also gives it when the connection broke after the request was
// written), which is the wire note's to tell (wire.go).
const codeRejected = -32005

// onProgress hands a progress notification to the call it is for; one for
// a call that has ended is dropped.
func (s *server) onProgress(p *sdk.ProgressNotificationParams) {
	if p == nil {
		return
	}
	if f, ok := s.progress.Load(fmt.Sprint(p.ProgressToken)); ok {
		f.(func(tools.Progress))(tools.Progress{Progress: p.Progress, Total: p.Total, Message: p.Message})
	}
}

// connectLocked returns the session with the server, starting the server
// (and listing its tools) when it is not running.
func (s *server) connectLocked(ctx context.Context) (*sdk.ClientSession, error) {
	if s.closed {
		return nil, fmt.Errorf("MCP server %s: the worker is stopping", s.name)
	}
	if s.session != nil {
		return s.session, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.StartTimeout)
	defer cancel()
	defer context.AfterFunc(s.stopping, cancel)()

	t, redact, err := s.transport()
	if err != nil {
		return nil, fmt.Errorf("MCP server %s: %w", s.name, err)
	}
	s.redact = redact
	client := sdk.NewClient(&sdk.Implementation{Name: "todoflow", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler:      func(context.Context, *sdk.ToolListChangedRequest) { s.stale.Store(true) },
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) { s.onProgress(r.Params) },
	})
	started := time.Now()
	cs, err := client.Connect(ctx, t, nil)
	if err != nil {
		return nil, s.flatLocked("start", err)
	}
	if err := s.listLocked(ctx, cs); err != nil {
		go cs.Close()
		return nil, err
	}
	s.session = cs
	s.failures = 0
	go s.watch(cs)
	s.opts.Logger.Info("MCP server started", "server", s.name, "tools", len(s.tools), "took", time.Since(started).Round(time.Millisecond))
	return cs, nil
}

// listLocked lists the server's tools and makes them tools for the model
// (names.go, hints). A tool that cannot be offered (its name clashes once
// made fit, its schema is not an object, it must run as an MCP task) is
// left out and logged, and does not cost the server's other tools.
func (s *server) listLocked(ctx context.Context, cs *sdk.ClientSession) error {
	// Cleared before listing, so that a change announced meanwhile is
	// listed next time.
	s.stale.Store(false)
	var found []tools.Tool
	var taskOnly []string
	remoteOf := make(map[string]string)
	note := &wireNote{listing: true}
	for t, err := range cs.Tools(withNote(ctx, note), nil) {
		if err != nil {
			return s.flatLocked("list tools", err)
		}
		if t.Name == "" {
			s.opts.Logger.Error("MCP server lists a tool without a name; it is not offered", "server", s.name)
			continue
		}
		if note.needsTask(t.Name) {
			taskOnly = append(taskOnly, t.Name)
			continue
		}
		name := toolName(s.prefix, t.Name)
		if other, dup := remoteOf[name]; dup {
			s.opts.Logger.Error("MCP tool names clash; the second is not offered", "server", s.name, "tool", t.Name, "clashes_with", other, "name", name)
			continue
		}
		spec := model.ToolSpec{Name: name, Description: cmp.Or(t.Description, t.Title)}
		if t.InputSchema != nil {
			b, err := json.Marshal(t.InputSchema)
			if err != nil {
				s.opts.Logger.Error("MCP tool's input schema cannot be encoded; the tool is not offered", "server", s.name, "tool", t.Name, "error", err)
				continue
			}
			spec.Parameters = b
		}
		if err := tools.CheckSpec(spec); err != nil {
			s.opts.Logger.Error("MCP tool cannot be offered", "server", s.name, "tool", t.Name, "error", err)
			continue
		}
		remoteOf[name] = t.Name
		found = append(found, &tool{srv: s, spec: spec, remote: t.Name, hints: hints(t.Annotations)})
	}
	if taskOnly != nil {
		s.opts.Logger.Warn("MCP server's tools that must run as tasks are not offered (todoflow calls tools directly, not as tasks)", "server", s.name, "tools", taskOnly)
	}
	slices.SortFunc(found, func(a, b tools.Tool) int { return strings.Compare(a.Spec().Name, b.Spec().Name) })
	if found == nil {
		found = []tools.Tool{} // listed, and none: not "never listed"
	}
	s.tools = found
	return nil
}

// watch notices that the session ended (the process exited, the connection
// broke), so that the next use starts the server again.
func (s *server) watch(cs *sdk.ClientSession) {
	err := cs.Wait()
	_ = cs.Close() // reaps the process
	s.mu.Lock()
	current := s.session == cs && !s.closed
	if current {
		s.session = nil
	}
	s.mu.Unlock()
	if current {
		s.opts.Logger.Warn("MCP server stopped; it is started again when next needed", "server", s.name, "error", err)
	}
}

// dropLocked forgets cs and closes it in the background (closing a stdio
// session waits for the process to exit).
func (s *server) dropLocked(cs *sdk.ClientSession) {
	if s.session == cs {
		s.session = nil
	}
	go cs.Close()
}

// close stops the server if it runs; it is not started again.
func (s *server) close() error {
	s.mu.Lock()
	s.closed = true
	cs := s.session
	s.session = nil
	s.mu.Unlock()
	if cs == nil {
		return nil
	}
	if err := cs.Close(); err != nil && !isExit(err) {
		return fmt.Errorf("MCP server %s: stop: %w", s.name, err)
	}
	return nil
}

// isExit reports whether err only says how a stopped process ended, which
// is expected of a server told to stop.
func isExit(err error) bool {
	_, ok := errors.AsType[*exec.ExitError](err)
	return ok
}

// flatLocked is err as the model and history may see it: prefixed with the
// server and what was being done, with the values of references put back as
// references (a URL may hold a token), and without the chain of wrapped
// errors, whose texts Temporal would record as they are.
func (s *server) flatLocked(doing string, err error) error {
	return errors.New(s.hideLocked(fmt.Sprintf("MCP server %s: %s: %v", s.name, doing, err)))
}

// tool is one tool of a server, as the model sees it.
type tool struct {
	srv    *server
	spec   model.ToolSpec
	remote string // the name the server knows it by
	hints  tools.Hints
}

func (t *tool) Spec() model.ToolSpec { return t.spec }

// Hints are the tool's annotations: RunTool sends a call again after an
// interruption only as they allow, and holds a call that may destroy when
// the run asks for approval of those.
func (t *tool) Hints() tools.Hints { return t.hints }

// hints reads a tool's annotations with MCP's defaults for what a server
// leaves out: not read-only, destructive, not idempotent. (The SDK reads
// an absent readOnlyHint or idempotentHint as false, their default.)
func hints(a *sdk.ToolAnnotations) tools.Hints {
	if a == nil {
		return tools.DefaultHints
	}
	return tools.Hints{
		ReadOnly:    a.ReadOnlyHint,
		Destructive: a.DestructiveHint == nil || *a.DestructiveHint,
		Idempotent:  a.IdempotentHint,
	}
}

// Run checks the arguments against the tool's schema (DecodeArgs), so that
// a malformed call gets a clear error without a round trip; the server
// checks them too, and alone when the schema is one DecodeArgs cannot use.
func (t *tool) Run(ctx context.Context, env tools.Env, args json.RawMessage) (string, error) {
	var obj json.RawMessage
	if err := tools.DecodeArgs(t.spec, args, &obj); err != nil {
		return "", err
	}
	return t.srv.call(ctx, t.remote, obj, env.Progress)
}
