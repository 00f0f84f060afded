// Package devserver runs the Temporal CLI's `temporal server start-dev` as a child process:
// the embedded server of `worker --dev`, `starter run` and `starter chat`, and the server of
// the end-to-end tests. Where its binary comes from is told in the README; [BinaryPath]
// picks it and says why.
//
// # Why not the SDK's testsuite.StartDevServer
//
// It runs the same command and its ExistingPath would take our binary, but the *exec.Cmd it
// builds is private, so the server would inherit the whole environment (the model's API key,
// OpenTelemetry settings that stop it from starting: see serverEnv), get no parent-death
// signal nor process group (a SIGKILLed worker would leave it holding the ports and the
// database), and give no pid to SIGKILL ([Server.Kill] for the crash tests, the benchmarks'
// CPU time). It also waits a minute for a server that died at startup, and stops with a
// SIGINT it waits on without bound. So [Start] runs the process itself.
//
// # What this package owns
//
//   - One build of the CLI per machine, in [CachePath], from tools/go.mod (its server pins
//     older Temporal APIs than our SDK, so it cannot be linked in): about 7 minutes and 2 GB
//     on 2 cores, so concurrent callers wait on a cross-process flock for one build.
//   - One server per SQLite file ([ErrDBInUse]): two would both own every shard of the
//     same history.
//   - A server that never outlives its parent (Pdeathsig on Linux), in its own process
//     group, that [Server.Stop] ends gently and [Server.Kill] as a crash would; started
//     again on the same file and port, it carries on, and connected clients reconnect.
//   - The settings measured to matter on these machines (flagArgs), and the search
//     attributes: [EnsureSearchAttributes] also serves any other Temporal server, and a
//     missing attribute is a clear startup error, never a workflow-task retry loop.
package devserver
