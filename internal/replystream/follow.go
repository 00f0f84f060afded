package replystream

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
)

// quietLimit is how long a followed stream may send nothing, keep-alive
// lines included, before the follower gives up on it.
const quietLimit = 2 * keepAlive

// maxLine bounds a line of the stream: a frame of MaxBytes of text,
// sealed, in base64.
const maxLine = 8*MaxBytes + 4096

// followClient reaches the workers' stream servers: a worker that is gone
// fails fast, and a stream has no overall deadline (it lasts as long as
// its call).
var followClient = &http.Client{Transport: &http.Transport{
	DialContext:           (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
	ResponseHeaderTimeout: 5 * time.Second,
	MaxIdleConnsPerHost:   2,
}}

// ErrEnded is Follow's error when the call has ended, or does not run at
// that server (any more).
var ErrEnded = errors.New("the call does not run there")

// Follow reads the stream of call k from the server at base and hands
// each frame to fn, until the call ends (nil), ctx ends or the stream
// fails (an error; the caller may follow again and gets the reply so far).
func Follow(ctx context.Context, base string, k Key, dc converter.DataConverter, fn func(Frame)) error {
	if dc == nil {
		dc = converter.GetDefaultDataConverter()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	q := url.Values{"workflow_id": {k.WorkflowID}, "run_id": {k.RunID}, "activity_id": {k.ActivityID}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+Path+"?"+q.Encode(), nil)
	if err != nil {
		return fmt.Errorf("reply stream at %s: %w", base, err)
	}
	resp, err := followClient.Do(req)
	if err != nil {
		return fmt.Errorf("reply stream at %s: %w", base, err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return ErrEnded
	default:
		return fmt.Errorf("reply stream at %s: %s", base, resp.Status)
	}
	quiet := time.AfterFunc(quietLimit, cancel)
	defer quiet.Stop()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	for sc.Scan() {
		quiet.Reset(quietLimit)
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue // a blank line or a keep-alive
		}
		f, err := decode(data, dc)
		if err != nil {
			return fmt.Errorf("reply stream at %s: %w", base, err)
		}
		fn(f)
		if f.End {
			return nil
		}
	}
	if err := sc.Err(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("reply stream at %s: %w", base, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("reply stream at %s: %w", base, err)
	}
	return fmt.Errorf("reply stream at %s: closed before the call ended", base)
}

// decode reads a frame's data line.
func decode(data string, dc converter.DataConverter) (Frame, error) {
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return Frame{}, fmt.Errorf("a frame that is not base64: %w", err)
	}
	var p commonpb.Payload
	if err := proto.Unmarshal(b, &p); err != nil {
		return Frame{}, fmt.Errorf("a frame that is no payload: %w", err)
	}
	var f Frame
	if err := dc.FromPayload(&p, &f); err != nil {
		return Frame{}, fmt.Errorf("a frame this client cannot read (is its payload key the worker's?): %w", err)
	}
	return f, nil
}
