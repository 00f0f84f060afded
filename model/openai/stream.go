package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/todoflow/todoflow/model"
)

// completeStream makes the request with "stream": true and hands each piece
// of the reply's text to req.Stream as it arrives; the chunks are
// accumulated into the same completion a plain request returns, so the
// Response does not depend on whether it was streamed.
//
// The raw response is taken (WithResponseBodyInto) rather than the SDK's
// NewStreaming, so that a server that ignores "stream" and answers with one
// JSON completion (some compatible servers and proxies do) still works: its
// whole text is streamed in one piece.
func (c *Client) completeStream(ctx, callCtx context.Context, req model.Request, params oai.ChatCompletionNewParams) (model.Response, error) {
	// Usage comes in a last chunk, and only when asked for.
	params.StreamOptions = oai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)}
	var raw *http.Response
	_, err := c.sdk.Chat.Completions.New(callCtx, params, option.WithJSONSet("stream", true), option.WithResponseBodyInto(&raw))
	if err != nil {
		return model.Response{}, c.classify(ctx, req.Model, raw, err)
	}
	defer raw.Body.Close()

	var completion *oai.ChatCompletion
	if mt, _, _ := mime.ParseMediaType(raw.Header.Get("Content-Type")); mt == "application/json" {
		completion = new(oai.ChatCompletion)
		if err := json.NewDecoder(raw.Body).Decode(completion); err != nil {
			return model.Response{}, c.classify(ctx, req.Model, raw, err)
		}
		if len(completion.Choices) > 0 {
			if text := completion.Choices[0].Message.Content; text != "" {
				req.Stream(text)
			}
		}
	} else {
		stream := ssestream.NewStream[oai.ChatCompletionChunk](ssestream.NewDecoder(raw), nil)
		defer stream.Close()
		var acc oai.ChatCompletionAccumulator
		for stream.Next() {
			chunk := stream.Current()
			if !acc.AddChunk(chunk) {
				// Chunks that do not fit together (an index out of order, a
				// changed id) cannot make a trustworthy answer; ask again.
				return model.Response{}, &model.Error{
					Retryable: true,
					Message:   fmt.Sprintf("openai: model %q at %s: the streamed answer's chunks do not fit together", req.Model, c.baseURL),
				}
			}
			for _, ch := range chunk.Choices {
				if ch.Index != 0 {
					continue
				}
				if d := ch.Delta.Content + ch.Delta.Refusal; d != "" {
					req.Stream(d)
				}
			}
		}
		if err := stream.Err(); err != nil {
			if ctx.Err() != nil {
				return model.Response{}, c.classify(ctx, req.Model, nil, err)
			}
			// A connection lost half-way, an error event, a chunk that is
			// not JSON: the server may do better next time.
			return model.Response{}, &model.Error{
				Retryable: true,
				Message:   fmt.Sprintf("openai: model %q at %s: the streamed answer broke off: %s", req.Model, c.baseURL, shorten(c.redact(err.Error()))),
				Err:       err,
			}
		}
		completion = &acc.ChatCompletion
	}
	resp, err := convertResponse(completion, req.Call)
	if err != nil {
		// A stream that ended without a choice: a cut-off answer, or a
		// proxy's page; asking again is the only remedy.
		return model.Response{}, &model.Error{
			Retryable: true,
			Message:   fmt.Sprintf("openai: model %q at %s: %v", req.Model, c.baseURL, err),
			Err:       err,
		}
	}
	return resp, nil
}
