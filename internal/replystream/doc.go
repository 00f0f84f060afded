// Package replystream serves the text of the model calls a worker is
// running to the clients that watch them, over HTTP, and follows such a
// stream on the client's side. Nothing of it goes through the Temporal
// server: a streamed piece of text costs no billable action and no write
// on the server, whether or not anyone watches.
//
// # Finding a stream
//
// A worker with a Server runs under an Identity that names the server's
// URL. The server records the identity of the worker that started an
// activity, and DescribeWorkflowExecution shows it with each running
// activity (PendingActivityInfo.LastWorkerIdentity): a client that looks
// at a session finds the URL of its running model call there (Locate),
// from the moment the call starts, without a heartbeat. A loopback URL is
// followed only on the machine that named it.
//
// # What a caller must know
//
// A call is served to a caller that names its workflow id, run id and
// activity id (Key): the run id, a random UUID, is what a caller must have
// learned from the Temporal server, which answers only those who may read
// the workflow; it is compared in constant time. Each frame is a Temporal
// payload made by the worker's data converter, as the call's heartbeat
// details are: with payload encryption on, a caller without the key reads
// nothing. The server serves only the calls it runs, while they run, to a
// bounded number of watchers at once (MaxWatchers), and of one call
// (MaxPerCall), so that one caller who knows a run id cannot take them all,
// with bounded frames and timeouts on every read and write. With a
// certificate (Options.TLS) it serves HTTPS, and the run ids callers name
// do not cross the network in the clear; followers trust the system's
// authorities and the certificates of the file EnvCA names.
//
// # The stream
//
// A call's Reply keeps the text so far, its last MaxBytes (and how many
// bytes were left out before them). A watcher gets a first frame with all
// of it, then a frame for each change, coalesced when it reads slower than
// the model writes, and a last frame when the call ends: one that comes
// late, or again after its connection broke, still sees the reply so far.
// A frame's At is the offset of its text in the whole reply, so that a
// client places it whatever it had.
//
// The wire format is server-sent events: "data: " and the frame's payload
// (protobuf, base64), a blank line after each; a line that starts with ":"
// keeps a quiet connection open.
package replystream
