package replystream

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
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

// EnvCA names a PEM file of certificates that followers trust besides
// the system's: those of stream servers whose certificate the operator
// made (worker --stream-cert).
const EnvCA = "TODOFLOW_STREAM_CA"

// followClients reach the workers' stream servers, one client per value of
// EnvCA: a worker that is gone fails fast, and a stream has no overall
// deadline (it lasts as long as its call).
var followClients sync.Map // EnvCA's value → *http.Client

// followClient is the client of the EnvCA this process has now.
func followClient() (*http.Client, error) {
	ca := os.Getenv(EnvCA)
	if c, ok := followClients.Load(ca); ok {
		return c.(*http.Client), nil
	}
	tr := &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 5 * time.Second,
		MaxIdleConnsPerHost:   2,
	}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("reply streams' certificates (%s): %w", EnvCA, err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("reply streams' certificates (%s): %s holds no PEM certificate", EnvCA, ca)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	c, _ := followClients.LoadOrStore(ca, &http.Client{Transport: tr})
	return c.(*http.Client), nil
}

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
	hc, err := followClient()
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
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
