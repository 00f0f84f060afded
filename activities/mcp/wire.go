package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/http/httptrace"
	"os"
	"slices"
	"sync"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// What the client sees of the wire, which the SDK does not tell.
//
// Whether a call may have reached the server: the SDK's errors do not say
// whether a request was written before a connection broke, so a call
// carries a note (in its context) that the transport marks once the request
// may have reached the server. For a stdio server that is when it was
// handed to the pipe, unless the write failed on a pipe whose reader had
// gone with a message short enough that the pipe takes it whole or not at
// all (pipeAtomic). For a Streamable HTTP server it is when net/http says
// the whole request was written (a body cut short is never a whole JSON-RPC
// request, so no server acts on it), unless the answer was a client error
// (4xx: the session is unknown after the server restarted, the token is
// refused, the rate is limited), by which the server, or what stands
// before it, says it did not take the request. A call whose note does not
// say it may have arrived certainly did not reach the tool
// (tools.Unsent).
//
// Which tools must run as tasks: the SDK's Tool has no "execution" (MCP
// tasks, taskSupport "required"), so a listing carries a note too, and the
// transport reads the names of such tools from the raw listing.
//
// The stdio connection is wrapped (wireConn); the HTTP one cannot be, as
// the SDK speaks to it through unexported methods, so its requests are
// watched in the HTTP client's RoundTripper (wireRoundTripper).

// wireNote is what the transport tells one call of the client.
type wireNote struct {
	listing bool // the call lists tools: collect taskOnly

	mu       sync.Mutex
	written  bool
	refused  bool // answered with a client error (HTTP 4xx)
	taskOnly []string
}

type wireKey struct{}

func withNote(ctx context.Context, n *wireNote) context.Context {
	return context.WithValue(ctx, wireKey{}, n)
}

func noteOf(ctx context.Context) *wireNote {
	n, _ := ctx.Value(wireKey{}).(*wireNote)
	return n
}

// mark sets one of n's flags (&n.written, &n.refused).
func (n *wireNote) mark(flag *bool) {
	n.mu.Lock()
	*flag = true
	n.mu.Unlock()
}

// mayHaveArrived reports whether the call's request may have reached the
// tool.
func (n *wireNote) mayHaveArrived() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.written && !n.refused
}

// readListing notes the tools of a tools/list result that must run as
// tasks.
func (n *wireNote) readListing(result json.RawMessage) {
	var res struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution *struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &res) != nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, t := range res.Tools {
		if t.Execution != nil && t.Execution.TaskSupport == "required" {
			n.taskOnly = append(n.taskOnly, t.Name)
		}
	}
}

// needsTask reports whether the listing said tool must run as a task.
func (n *wireNote) needsTask(tool string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Contains(n.taskOnly, tool)
}

// wireTransport is a stdio transport whose connection is watched.
type wireTransport struct{ sdk.Transport }

func (t wireTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &wireConn{Connection: c, listings: make(map[jsonrpc.ID]*wireNote)}, nil
}

// wireConn marks the notes of the calls it writes, and reads the listings
// it receives for the notes that wait for them.
type wireConn struct {
	sdk.Connection
	mu       sync.Mutex
	listings map[jsonrpc.ID]*wireNote // by request id
}

func (c *wireConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	n := noteOf(ctx)
	req, ok := msg.(*jsonrpc.Request)
	if n == nil || !ok || !req.IsCall() {
		return c.Connection.Write(ctx, msg)
	}
	if n.listing {
		c.mu.Lock()
		c.listings[req.ID] = n
		c.mu.Unlock()
	}
	err := c.Connection.Write(ctx, msg)
	if err == nil || !unwritten(err, msg) {
		n.mark(&n.written)
	}
	return err
}

func (c *wireConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil {
		c.mu.Lock()
		n := c.listings[resp.ID]
		delete(c.listings, resp.ID)
		c.mu.Unlock()
		if n != nil && resp.Error == nil {
			n.readListing(resp.Result)
		}
	}
	return msg, err
}

// pipeAtomic is the size up to which POSIX makes a write to a pipe all or
// nothing (PIPE_BUF is at least 512; 4096 on Linux).
const pipeAtomic = 512

// unwritten reports whether a failed write of msg to a stdio server
// certainly put none of it in the pipe: the pipe was closed on our side, or
// its reader was gone (EPIPE) and msg, with its newline, fits one atomic
// write. A longer message may have gone in part, so it may have arrived.
func unwritten(err error, msg jsonrpc.Message) bool {
	if errors.Is(err, os.ErrClosed) {
		return true
	}
	if !errors.Is(err, syscall.EPIPE) {
		return false
	}
	b, encErr := jsonrpc.EncodeMessage(msg)
	return encErr == nil && len(b)+1 <= pipeAtomic
}

// wireRoundTripper watches the HTTP requests of the calls that carry a
// note: it marks the note once net/http has written the whole request, and
// when the answer is a client error; and it reads the tool listings of the
// responses to listing calls.
type wireRoundTripper struct{ base http.RoundTripper }

func (t wireRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	n := noteOf(r.Context())
	if n == nil {
		return t.base.RoundTrip(r)
	}
	trace := &httptrace.ClientTrace{WroteRequest: func(info httptrace.WroteRequestInfo) {
		if info.Err == nil {
			n.mark(&n.written)
		}
	}}
	r = r.WithContext(httptrace.WithClientTrace(r.Context(), trace))
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	if resp.StatusCode >= 400 && resp.StatusCode < 500 {
		n.mark(&n.refused)
	}
	if n.listing {
		resp.Body = newListingBody(resp, n)
	}
	return resp, nil
}

// maxListing bounds what a listing body keeps to read its tools, as the
// SDK bounds a message (sdk.DefaultMaxLineLength).
const maxListing = sdk.DefaultMaxLineLength

// listingBody passes a response body on as it is read, and reads the
// JSON-RPC responses in it (one JSON message, or the data of server-sent
// events) before it hands on their last byte, so that the note is complete
// before the SDK has the message.
type listingBody struct {
	io.ReadCloser
	note *wireNote
	sse  bool
	buf  []byte // the JSON so far, or the event stream's unfinished line
	data []byte // the data lines of the event being read
	over bool   // too large to read: given up
}

func newListingBody(resp *http.Response, n *wireNote) io.ReadCloser {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return &listingBody{ReadCloser: resp.Body, note: n, sse: mt == "text/event-stream"}
}

func (b *listingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if !b.over {
		b.buf = append(b.buf, p[:n]...)
		if b.sse {
			b.events()
		}
		if len(b.buf)+len(b.data) > maxListing {
			b.over, b.buf, b.data = true, nil, nil
		}
		if err == io.EOF && !b.sse {
			b.message(b.buf)
			b.buf = nil
		}
	}
	return n, err
}

// events reads the complete lines of the event stream: an event's "data:"
// lines make its message, which an empty line ends.
func (b *listingBody) events() {
	for {
		i := bytes.IndexByte(b.buf, '\n')
		if i < 0 {
			return
		}
		line := bytes.TrimSuffix(b.buf[:i], []byte("\r"))
		b.buf = b.buf[i+1:]
		switch {
		case len(line) == 0:
			b.message(b.data)
			b.data = nil
		case bytes.HasPrefix(line, []byte("data:")):
			if b.data != nil {
				b.data = append(b.data, '\n')
			}
			b.data = append(b.data, bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))...)
		}
	}
}

func (b *listingBody) message(data []byte) {
	if len(bytes.TrimSpace(data)) == 0 {
		return
	}
	if msg, err := jsonrpc.DecodeMessage(data); err == nil {
		if resp, ok := msg.(*jsonrpc.Response); ok && resp.Error == nil {
			b.note.readListing(resp.Result)
		}
	}
}
