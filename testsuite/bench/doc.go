// Command bench measures what todoflow's durable loop costs, against a bare
// Temporal workflow on the same server in the same run:
//
//	go run ./testsuite/bench          # every figure of BENCHMARKS.md (about 23 minutes)
//	go run ./testsuite/bench -quick   # a cheap check (about 2 minutes)
//
// # Ratios, not times
//
// The machines here are shared and noisy, so every time is paired with a
// baseline measured in the same run, alternating with it, and the ratio is
// the figure to compare: an agent run of 9 model calls and 6 tool calls
// (the scripted model, so the model itself costs nothing) against a bare
// workflow of 15 no-op activities one after the other, at 1, 20 and 100
// concurrent runs. A sample is at least 60 runs of each kind, in rounds
// that alternate the two, and a figure is the median of -reps samples. The
// program prints the load average beside its figures, and a line on the
// runs that took more than 3 s longer than the median of their round:
// where their histories waited longest, and any timeout or failure
// (slow.go).
//
// The driver and the worker dial the server as todoflow's starter and
// worker do (agentworker.Compression: no gzip on loopback); the bare
// workflow shares the worker's client, so both kinds of runs get the same
// connection.
//
// # Three processes
//
// The driver (this program) starts the embedded dev server with its tuned
// settings (package worker/devserver), and a worker process: this program
// again with -role worker, hosting todoflow's worker (agentworker.New) and,
// on a task queue of its own with the same SDK options, the bare workflow.
// Each process's CPU time is read from /proc around each sample, the
// worker's memory likewise, and the worker counts its RPCs to the server by
// method with a gRPC interceptor, so that a model call's cost can be split:
// how many workflow tasks, queries and heartbeats it takes, how many bytes
// they carry, and (from the history's own timestamps) how long each step
// of an activity takes against a bare one.
//
// # Phases
//
//   - ratio: the agent run against the bare run at each concurrency.
//   - steps: one at a time, where an activity's time goes (scheduled →
//     started → completed → the workflow task it wakes), the worker's RPCs
//     and the history per model call, agent against bare.
//   - chat: a session of 500 turns driven by send_message; the history
//     each of turns 10, 100 and 500 added, continue-as-new included.
//   - stream: the billable actions of a turn whose reply streams for 10 s
//     (the server's `action` counter), unwatched and watched, and the
//     time from a model's first token to a client watching the
//     session, the model a real OpenAI-compatible server in this process
//     that streams its reply in timed pieces (stream.go); with -revs, the
//     workers of earlier revisions too, in the same run.
//   - levers: the ratio under other worker settings (eager activities off,
//     gzip on, more pollers, no transcript cache), each in a fresh worker
//     process, and under the workers of earlier revisions (-revs).
//   - idle: a fresh worker's memory with 1,000 sessions waiting for their
//     user.
//   - replay: a session of 1,000 turns on a server of its own that does not
//     suggest continue-as-new, and the time to replay its one history (the
//     history is generated, not stored; -save-history keeps it).
//   - cluster (only when -phases names it: it needs PostgreSQL and a build
//     of temporal-server): 1,000 chat sessions of 3 turns each
//     (-cluster-sessions, -cluster-turns), 100 at a time (-cluster-conc),
//     driven through package client on two worker processes with state
//     folders of their own, against a dev server of its own and against a
//     cluster that deploy/cluster.sh brings up in a temporary folder and
//     takes down after (cluster.go, clustersh.go). Both are up throughout
//     and the samples alternate; each sample has fresh workers, whose peak
//     RSS (VmHWM) it reads. It reports turns per second, the p50 and p99
//     of a turn's latency (Send to its reply, as the client sees it), the
//     workers' peak RSS and the CPU per turn of the server's processes
//     (PostgreSQL's backends included) and of the workers, with the ratio
//     cluster / dev server (chatload.go).
//
// -cpuprofile writes the worker's CPU profile during the highest
// concurrency of the ratio phase (go tool pprof -top FILE).
package main
