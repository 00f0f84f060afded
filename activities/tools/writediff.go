package tools

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/todoflow/todoflow/internal/linediff"
)

// What a write_file call changed, for the user.
//
// The model reads "wrote N bytes"; the user, watching the session, sees
// what the call did to the file: a diff of its previous content and the
// new one. The diff travels beside the tool's result (activities.RunToolResult.Diff),
// never in the tool message, so the model's transcript is what it was, and
// it is bounded, since it enters the run's history once, in the activity's
// result.

// Bounds of the diff a call shows its user.
const (
	// MaxDiffBytes is the most bytes of a call's diff (activities.RunToolResult.Diff);
	// a tool that hands a longer one has it cut, with a note.
	MaxDiffBytes = 16 << 10
	// maxDiffLines is the most lines of the diff write_file makes.
	maxDiffLines = 200
	// maxDiffFile is the largest previous content write_file compares:
	// what one call may write.
	maxDiffFile = MaxWriteBytes
)

// writeDiff is the diff of writing content to name in root, read before
// the write, and the lines it adds and removes (none counted when the texts
// are not compared); name has passed write_file's checks (a regular file,
// or none).
func writeDiff(root *os.Root, name, content string) (string, linediff.Stats) {
	old, note := previousText(root, name)
	if note != "" {
		return note, linediff.Stats{}
	}
	if problem := textProblem([]byte(content), 0); problem != "" {
		return fmt.Sprintf("\\ the new content (%d bytes) is not text, so it is not compared: it %s", len(content), problem), linediff.Stats{}
	}
	diff, st := linediff.Unified(old, content, linediff.Options{MaxLines: maxDiffLines, MaxBytes: MaxDiffBytes})
	if diff == "" {
		return "\\ no change: the file already had this content", st
	}
	return diff, st
}

// previousText is the file's content before the write ("" for a new file),
// or a note that says why it is not compared: too large, not text, not
// readable.
func previousText(root *os.Root, name string) (string, string) {
	f, err := root.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", ""
	}
	if err != nil {
		return "", "\\ the previous content could not be read, so it is not compared"
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxDiffFile+1))
	switch {
	case err != nil:
		return "", "\\ the previous content could not be read, so it is not compared"
	case len(data) > maxDiffFile:
		return "", fmt.Sprintf("\\ the previous content is over %d bytes, too large to compare", maxDiffFile)
	}
	if problem := textProblem(data, 0); problem != "" {
		return "", fmt.Sprintf("\\ the previous content (%d bytes) is not text, so it is not compared: it %s", len(data), problem)
	}
	return string(data), ""
}
