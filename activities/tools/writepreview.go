package tools

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"

	"github.com/todoflow/todoflow/api"
)

// previewWrite is the diff a write_file call would make, worked out with
// the write's own checks (writeTarget: the workspace's confinement, the
// size, version control metadata, a regular file or none) and its own diff
// (writeDiff), and nothing written, no folder made. A call the write
// would refuse is refused here with the same error.
func previewWrite(_ context.Context, env Env, raw json.RawMessage) (api.CallDiff, error) {
	var args writeArgs
	if err := DecodeArgs(writeFileSpec, raw, &args); err != nil {
		return api.CallDiff{}, err
	}
	root, _, to, err := writeTarget(env, args)
	if err != nil {
		return api.CallDiff{}, err
	}
	_, err = root.Lstat(to.name)
	hunks, st := writeDiff(root, to.name, args.Content)
	return api.CallDiff{Hunks: hunks, Added: st.Added, Removed: st.Removed, New: errors.Is(err, fs.ErrNotExist)}, nil
}
