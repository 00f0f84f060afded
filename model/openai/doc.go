// Package openai implements model.Client over the OpenAI Chat Completions API.
//
// It speaks the wire format through the official openai-go SDK, so it works with
// api.openai.com and with any OpenAI-compatible server (Ollama, vLLM, llama.cpp,
// LiteLLM, ...) reachable at a base URL. NewFromEnv reads the usual variables:
//
//	OPENAI_API_KEY   the bearer token; may be empty when OPENAI_BASE_URL is set,
//	                 because local servers often need none
//	OPENAI_BASE_URL  the endpoint, e.g. http://localhost:11434/v1
//
// # Retries belong to Temporal
//
// The SDK would normally retry 429s and 5xx on its own, hidden inside one
// activity attempt. That would hide failures from the workflow history, stack
// its backoff on top of Temporal's and keep the activity busy without
// heartbeating, so the SDK's retries are switched off and every Complete makes
// exactly one HTTP request. Failures come back as *model.Error:
//
//   - 408, 409, 429 and 5xx are retryable; the delay the server asked for
//     (retry-after-ms, or Retry-After in seconds or as an HTTP date) becomes
//     RetryAfter, which the activity turns into Temporal's next retry delay.
//   - 401 and 403 are not retryable: no amount of waiting fixes a wrong key.
//     The message points at OPENAI_API_KEY and never contains the key.
//   - Other 4xx are not retryable and carry the server's own message, which is
//     usually the only useful hint (unknown model, context too long, ...).
//   - Transport failures (connection refused, timeouts, garbled bodies) and a
//     response without choices are retryable: a server that is restarting or
//     overloaded behaves like that for a while.
//
// # Streaming
//
// A request with a Stream callback is sent with "stream": true (and
// stream_options.include_usage, so that usage is still counted); each piece
// of the reply's text goes to the callback as it arrives, and the chunks are
// accumulated (the SDK's ChatCompletionAccumulator) into the completion a
// plain request would have returned. A server that ignores "stream" and
// answers with one JSON completion works too: its text is one piece. A
// stream that breaks off half-way is a retryable error; the pieces already
// handed out were only a preview.
//
// # Conversion
//
// The transcript maps one to one onto chat messages, with two deliberate
// losses. A user message's Name (the reason the agent loop injected it) is not
// sent: the name field is optional in the API and several compatible servers
// reject or mishandle it, while the content already says what it needs to.
// A tool message's IsError is not sent either: the wire format has no such
// field, and the content already explains the failure.
//
// Tool-call arguments are opaque text on the wire but a JSON object in
// model.ToolCall. Text that is not a JSON object is kept, wrapped as a JSON
// string, so that the tool layer can tell the model what was wrong instead of
// silently running the tool with nothing; on the way back such a string is
// unwrapped so the model sees exactly what it sent.
package openai
