package tools

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/todoflow/todoflow/internal/fuzzcheck"
)

// readPieceNote matches either note read_file ends a piece with.
var readPieceNote = regexp.MustCompile(`\n\[read_file: (\d+) bytes from offset (\d+)(?: of the file's (\d+); call read_file with offset (\d+) to read on|, up to the end of the file)\]$`)

// FuzzReadFile reads a piece of any file with any offset, limit and output
// limit. `go test ./activities` replays the seeds; to search for new inputs:
//
//	go test ./activities -run '^$' -fuzz '^FuzzReadFile$' -fuzztime 60s -parallel 2
//
// A refusal is a clear error. A piece is the file's bytes from the offset
// (moved to the next character at most), valid UTF-8 without NUL, within
// the limits with its note, and the note's next offset always moves on, so
// that a model reading on from the notes reaches the end.
func FuzzReadFile(f *testing.F) {
	for _, seed := range []struct {
		content       string
		offset, limit int64
		outputMax     uint16
	}{
		{"# Notes\nhello\n", 0, 0, 0},
		{"a€b€c", 2, 1, 0},
		{"a€b€c", 9, 0, 0},
		{strings.Repeat("héllo wörld 😀\n", 300), 0, 0, 1024},
		{strings.Repeat("x", 3000) + "\x00", 2000, 500, 2048},
		{"caf\xe9", 0, 0, 0},
		{"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", 0, 0, 0},
		{"ends in half a character \xe2\x82", 0, 0, 0},
		{"", 0, 0, 0},
		{"", 1, 0, 0},
		{"abc", -1, 0, 0},
		{"abc", 0, -5, 0},
	} {
		f.Add([]byte(seed.content), seed.offset, seed.limit, seed.outputMax)
	}
	// One workspace for every input: a folder per input would cost more
	// than the read.
	ws := openWorkspace(f, f.TempDir())
	f.Fuzz(func(t *testing.T, content []byte, offset, limit int64, outputMax uint16) {
		env := Env{Workspace: ws, OutputMax: int(outputMax)}
		if env.OutputMax > 0 {
			env.OutputMax = max(env.OutputMax, minOutputMax) // what RunTool passes
		}
		mustWrite(t, filepath.Join(env.Workspace.Dir(), "f.txt"), string(content))
		args := fmt.Sprintf(`{"path": "f.txt", "offset": %d}`, offset)
		if limit != 0 {
			args = fmt.Sprintf(`{"path": "f.txt", "offset": %d, "limit": %d}`, offset, limit)
		}

		out, err := call(t, env, "read_file", args)
		if err != nil {
			fuzzcheck.Message(t, "read_file", err.Error())
			return
		}
		if env.OutputMax > 0 && len(out) > env.OutputMax {
			t.Fatalf("%d bytes, over the output limit of %d", len(out), env.OutputMax)
		}
		body, m := out, readPieceNote.FindStringSubmatch(out)
		if m != nil {
			body = strings.TrimSuffix(out, m[0])
		} else if offset > 0 || len(content) > MaxReadBytes {
			t.Fatalf("no note on a piece from offset %d of %d bytes: %q", offset, len(content), out[max(0, len(out)-120):])
		}
		if !utf8.ValidString(body) || strings.ContainsRune(body, 0) {
			t.Fatalf("the piece is not text: %q", body)
		}
		start := offset
		if m != nil {
			start, _ = strconv.ParseInt(m[2], 10, 64)
			if m[1] != strconv.Itoa(len(body)) {
				t.Fatalf("note says %s bytes, the piece has %d", m[1], len(body))
			}
		}
		if start < offset || start > offset+utf8.UTFMax-1 || start+int64(len(body)) > int64(len(content)) || body != string(content[start:start+int64(len(body))]) {
			t.Fatalf("the piece (%d bytes from %d) is not the file's bytes from offset %d", len(body), start, offset)
		}
		if m != nil && m[4] != "" {
			next, _ := strconv.ParseInt(m[4], 10, 64)
			if next <= offset || next != start+int64(len(body)) || m[3] != strconv.Itoa(len(content)) {
				t.Fatalf("note %q after offset %d: reading on would not move or skip bytes", m[0], offset)
			}
		}
		if m != nil && m[4] == "" && start+int64(len(body)) != int64(len(content)) {
			t.Fatalf("note says the end of the file at %d; the file has %d bytes", start+int64(len(body)), len(content))
		}
		if m == nil && body != string(content) {
			t.Fatalf("the whole file without a note, but not the whole file")
		}
	})
}
