package tools

import (
	"context"
	"encoding/json"

	"github.com/todoflow/todoflow/api"
)

// Previewer is a Tool that can say what a call would change without
// changing anything: the diff a write would make, shown to the user while
// the call waits for approval (the activity PreviewTool). Preview runs the
// checks Run would, and returns the error Run would return for a call it
// would refuse.
type Previewer interface {
	HintedTool
	Preview(ctx context.Context, env Env, args json.RawMessage) (api.CallDiff, error)
}

// PreviewFunc is the preview of a tool made with WithPreview.
type PreviewFunc func(ctx context.Context, env Env, args json.RawMessage) (api.CallDiff, error)

// WithPreview returns t previewing its calls with fn.
func WithPreview(t HintedTool, fn PreviewFunc) Previewer {
	return previewed{HintedTool: t, fn: fn}
}

type previewed struct {
	HintedTool
	fn PreviewFunc
}

func (t previewed) Preview(ctx context.Context, env Env, args json.RawMessage) (api.CallDiff, error) {
	return t.fn(ctx, env, args)
}
