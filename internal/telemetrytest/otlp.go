// Package telemetrytest helps tests look at what a process reports: an
// OTLP trace collector (Collector) and a Prometheus scrape (Scrape). It is
// imported by tests only.
package telemetrytest

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Span is a received span, its ids in hex.
type Span struct {
	Name     string
	TraceID  string
	SpanID   string
	ParentID string
	// Service is the service.name of the span's resource.
	Service string
	// Attrs are the span's attributes, each value as text (a number in
	// decimal, a list or a map as JSON).
	Attrs map[string]string
}

// Collector is an OTLP trace collector: it receives spans over OTLP/HTTP
// (protobuf or JSON) or OTLP/gRPC, as a real collector would, and keeps them
// for the test to look at.
type Collector struct {
	mu    sync.Mutex
	spans []Span
}

// Spans returns the spans received so far, in the order they came.
func (c *Collector) Spans() []Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.spans)
}

// Named returns the received spans called name.
func (c *Collector) Named(name string) []Span {
	var out []Span
	for _, s := range c.Spans() {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

func (c *Collector) add(req *collectortrace.ExportTraceServiceRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		service := attrs(rs.GetResource().GetAttributes())["service.name"]
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				c.spans = append(c.spans, Span{
					Name:     s.GetName(),
					TraceID:  hex.EncodeToString(s.GetTraceId()),
					SpanID:   hex.EncodeToString(s.GetSpanId()),
					ParentID: hex.EncodeToString(s.GetParentSpanId()),
					Service:  service,
					Attrs:    attrs(s.GetAttributes()),
				})
			}
		}
	}
}

func attrs(kvs []*commonpb.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		v := kv.GetValue()
		switch x := v.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.GetKey()] = x.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.GetKey()] = strconv.FormatInt(x.IntValue, 10)
		case *commonpb.AnyValue_BoolValue:
			m[kv.GetKey()] = strconv.FormatBool(x.BoolValue)
		case *commonpb.AnyValue_DoubleValue:
			m[kv.GetKey()] = strconv.FormatFloat(x.DoubleValue, 'g', -1, 64)
		default:
			m[kv.GetKey()] = protojson.Format(v)
		}
	}
	return m
}

// NewHTTP starts a collector on OTLP/HTTP and returns it with its base URL
// (what OTEL_EXPORTER_OTLP_ENDPOINT names; spans go to /v1/traces). It
// stops when the test ends.
func NewHTTP(t testing.TB) (*Collector, string) {
	t.Helper()
	c := &Collector{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, r *http.Request) {
		body := io.Reader(r.Body)
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		data, err := io.ReadAll(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		req := &collectortrace.ExportTraceServiceRequest{}
		json := r.Header.Get("Content-Type") == "application/json"
		if json {
			err = protojson.Unmarshal(data, req)
		} else {
			err = proto.Unmarshal(data, req)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c.add(req)
		var out []byte
		if json {
			w.Header().Set("Content-Type", "application/json")
			out, _ = protojson.Marshal(&collectortrace.ExportTraceServiceResponse{})
		} else {
			w.Header().Set("Content-Type", "application/x-protobuf")
			out, _ = proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		}
		_, _ = w.Write(out)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return c, srv.URL
}

// NewGRPC starts a collector on OTLP/gRPC and returns it with its address
// (HOST:PORT, plain text). It stops when the test ends.
func NewGRPC(t testing.TB) (*Collector, string) {
	t.Helper()
	c := &Collector{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(srv, grpcService{c: c})
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return c, ln.Addr().String()
}

type grpcService struct {
	collectortrace.UnimplementedTraceServiceServer
	c *Collector
}

func (s grpcService) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	s.c.add(req)
	return &collectortrace.ExportTraceServiceResponse{}, nil
}
