package main

import (
	"context"
	"maps"
	"path"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// rpcCounter counts a client's calls to the Temporal frontend by method,
// with the bytes each way: how many workflow tasks, queries and heartbeats a
// model call costs, measured where the worker makes them.
type rpcCounter struct {
	mu sync.Mutex
	by map[string]rpcStat
}

// rpcStat is what one method cost: calls, and bytes sent and received
// (protobuf sizes, before compression).
type rpcStat struct {
	Calls int64 `json:"calls"`
	Sent  int64 `json:"sent"`
	Recv  int64 `json:"recv"`
	// Empty counts the answers that carried no task (a poll that timed
	// out), for the poll methods.
	Empty int64 `json:"empty"`
}

func newRPCCounter() *rpcCounter { return &rpcCounter{by: map[string]rpcStat{}} }

// interceptor is the grpc.UnaryClientInterceptor that counts.
func (r *rpcCounter) interceptor(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	var sent, recv int
	if m, ok := req.(proto.Message); ok {
		sent = proto.Size(m)
	}
	if m, ok := reply.(proto.Message); ok && err == nil {
		recv = proto.Size(m)
	}
	name := path.Base(method)
	r.mu.Lock()
	s := r.by[name]
	s.Calls++
	s.Sent += int64(sent)
	s.Recv += int64(recv)
	if err == nil && recv == 0 {
		s.Empty++
	}
	r.by[name] = s
	r.mu.Unlock()
	return err
}

// snapshot copies the counts so far.
func (r *rpcCounter) snapshot() map[string]rpcStat {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.by)
}

// sub is what happened between two snapshots.
func sub(after, before map[string]rpcStat) map[string]rpcStat {
	out := map[string]rpcStat{}
	for k, a := range after {
		b := before[k]
		d := rpcStat{a.Calls - b.Calls, a.Sent - b.Sent, a.Recv - b.Recv, a.Empty - b.Empty}
		if d != (rpcStat{}) {
			out[k] = d
		}
	}
	return out
}
