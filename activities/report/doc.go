// Package report delivers a run's plan events to the reporters its input
// names (api.ReporterConfig): a line in the worker's log (console.go), a
// JSON line appended to a file of the session's folder (file.go), or an
// HTTP POST (webhook.go, with the addresses a webhook may reach in
// webhookaddr.go). The Report activity of package activities calls Deliver
// with what only the worker knows: its log and the session's folder.
//
// # Errors for Temporal's retries
//
// Deliver's errors are application errors whose type (ErrType*) says whether
// Temporal should try again: a write or network error, or a webhook answering
// 408, 425, 429 or 5xx (its Retry-After the next retry's delay), may succeed
// later; a config, an event or a destination that cannot work will not. A
// webhook's error has its status, never its body, since it enters history.
package report
