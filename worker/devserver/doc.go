// Package devserver runs the embedded Temporal server that todoflow uses when no cluster
// address is given: the Temporal CLI's `temporal server start-dev`, as a child process.
//
// # Why a child process built from tools/go.mod
//
// The newest Temporal CLI that builds from the Go module proxy alone is
// github.com/temporalio/cli v1.5.1, and its server pins older Temporal API versions than
// the SDK the root module uses, so it cannot be linked into our binaries. It lives in its
// own module (tools/go.mod) and is built into a separate executable.
//
// # Why not the SDK's testsuite.StartDevServer
//
// testsuite.StartDevServer runs the same `temporal server start-dev`, and its ExistingPath
// would take our binary, but the process it starts is not one todoflow can run: it inherits
// the whole environment (the model's API key, the payload key: see serverEnv), has no
// parent-death signal nor process group (a killed worker would leave it holding the ports
// and the database), exposes neither its pid nor a SIGKILL (the crash tests' [Server.Kill],
// the benchmarks' CPU time), waits a minute for a server that died at startup instead of
// saying why, and stops with a SIGINT it waits on without bound. So [Start] runs the
// process itself, with the same command line (flagArgs: the SDK's flags, and ours).
//
// # Where the binary comes from, fastest first
//
// [BinaryPath] picks the first of: $TODOFLOW_TEMPORAL_CLI (taken as it is: the user asked
// for it); a `temporal` on PATH, which most Temporal users have, when its `--version` is
// one todoflow supports (every 1.x release from [CLIVersion] on, or a development build
// embedding at least Server [MinServerVersion]; others are passed over with a one-line
// reason); the cached build; and only then a build from tools/go.mod. It says on its
// progress writer which one it picked and why. (The SDK's testsuite download is not on
// the list: these machines cannot reach it, and a user who is online has a CLI already.)
//
// # One build, shared by everyone
//
// A cold build takes about 7 minutes and 2 GB of memory on 2 cores, and `go test` runs
// packages in parallel, so the built binary has exactly one home: [CachePath], which is
// os.UserCacheDir()/todoflow/temporal-cli-<CLIVersion>/temporal. The worker, the starter,
// the tests and .ci/run all use that path. It is built under a cross-process file lock
// (flock) so that parallel callers wait for one build instead of starting several, with a
// progress line every 30 seconds, because a silent 7-minute pause looks like a hang.
//
// # One server per database file
//
// `worker --dev` and `starter run` share the SQLite file in todoflow's state folder. Two
// servers on one file would both own every shard of the same history, so [Start] claims
// the file first ([ErrDBInUse] when it cannot): an flock beside it, held while the server
// runs, and, for servers todoflow did not start, SQLite's own lock on the WAL index.
//
// # Starting and stopping
//
// [Start] runs the server on 127.0.0.1 with the settings measured to matter on these
// machines (see flagArgs): faster history transfer polling and a single task-queue
// partition (about 100 ms less per activity), eager activity execution (a few ms less),
// SQLite in WAL mode with normal sync, and the search attributes the workflows need. It returns once the frontend answers the gRPC
// health check and the namespace is usable, or fails fast with the server's last log lines
// when the process exits early (a port in use, a broken database file).
//
// The server must never outlive its parent: on Linux the child gets Pdeathsig=SIGKILL, so
// even a SIGKILLed parent takes it down, and it runs in its own process group so [Server.Stop]
// can signal everything it started (SIGTERM, then SIGKILL after 10 seconds). [Server.Kill]
// is the crash instead (SIGKILL at once); a server started again on the same database file
// and port carries on, and the clients and workers that were connected reconnect by
// themselves (the fault tests of testsuite do this under load).
//
// # Search attributes on any server
//
// [EnsureSearchAttributes] works against the dev server and a real cluster alike: it adds
// the missing attributes through the operator service, or fails with an error that names
// the attribute and the command an administrator can run. A missing attribute must be a
// clear startup error, never a workflow-task retry loop.
package devserver
