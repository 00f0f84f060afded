package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/todoflow/todoflow/internal/text"
	"github.com/todoflow/todoflow/model"
)

// Limits of the built-in tools: their results go into the transcript, which
// is sent to the model on every turn and stored in workflow history, so a
// large folder or file must not flood it.
const (
	// MaxListEntries is the most entries list_files returns.
	MaxListEntries = 1000
	// MaxReadBytes is the most bytes of a file one read_file call returns;
	// a worker's output limit (Env.OutputMax) may make it less.
	MaxReadBytes = 256 << 10
	// MaxWriteBytes is the most bytes one write_file call writes. The
	// content came in a model's answer, which history keeps, so a larger
	// one is a run filling the worker's disk or its own history.
	MaxWriteBytes = 1 << 20
	// sniffBytes is the first block of a file that read_file checks for
	// text, wherever it is asked to read: a binary file is refused whole,
	// not read in pieces that happen to decode.
	sniffBytes = 8 << 10
	// noteRoom is what read_file and list_files keep free of the output
	// limit for their closing note, so that RunTool never cuts the note.
	noteRoom = 200
)

// DefaultRegistry returns a new registry with the built-in tools list_files,
// read_file and write_file. Add your own with Register.
func DefaultRegistry() *Registry {
	return NewRegistry(
		WithHints(New(listFilesSpec, listFiles), Hints{ReadOnly: true}),
		WithHints(New(readFileSpec, readFile), Hints{ReadOnly: true}),
		// It may overwrite a file; writing the same again changes nothing.
		// The diff a call would make is shown before it runs (the
		// activity PreviewTool).
		WithPreview(WithHints(New(writeFileSpec, writeFile), Hints{Destructive: true, Idempotent: true}), previewWrite),
	)
}

var listFilesSpec = model.ToolSpec{
	Name: "list_files",
	Description: "List what a folder of the workspace contains. Each line is one path, " +
		"relative to the workspace, so it can be passed to read_file as it is; folders end with \"/\". " +
		fmt.Sprintf("At most %d entries are returned (fewer if their paths are long), then a note saying so.", MaxListEntries),
	Parameters: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "The folder to list, relative to the workspace. Default: \".\", the workspace itself."},
    "recursive": {"type": "boolean", "description": "Also list everything inside the subfolders, at any depth. Default: false."}
  },
  "additionalProperties": false
}`),
}

var readFileSpec = model.ToolSpec{
	Name: "read_file",
	Description: "Return the text of a file in the workspace. " +
		fmt.Sprintf("A large file comes in pieces (at most %d KiB, less if the worker keeps tool output shorter): ", MaxReadBytes>>10) +
		"a piece that is not the whole file ends with a note giving the offset to read on from. " +
		"Files that are not UTF-8 text (images, archives, ...) are refused.",
	Parameters: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "The file to read, relative to the workspace."},
    "offset": {"type": "integer", "minimum": 0, "description": "Where to start, in bytes from the start of the file. Default: 0."},
    "limit": {"type": "integer", "minimum": 1, "description": "The most bytes to return. Default: as much as one call may return."}
  },
  "required": ["path"],
  "additionalProperties": false
}`),
}

var writeFileSpec = model.ToolSpec{
	Name: "write_file",
	Description: "Write text to a file in the workspace, replacing the file if it exists. " +
		"Missing parent folders are created. Returns how many bytes were written.",
	Parameters: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "The file to write, relative to the workspace."},
    "content": {"type": "string", "description": "The complete new content of the file."}
  },
  "required": ["path", "content"],
  "additionalProperties": false
}`),
}

func listFiles(ctx context.Context, env Env, raw json.RawMessage) (string, error) {
	const tool = "list_files"
	var args struct {
		Path      string `json:"path"`
		Recursive bool   `json:"recursive"`
	}
	if err := DecodeArgs(listFilesSpec, raw, &args); err != nil {
		return "", err
	}
	if args.Path == "" {
		args.Path = "."
	}
	root, name, err := env.Workspace.openPath(tool, args.Path)
	if err != nil {
		return "", err
	}

	fi, err := root.Stat(name)
	if err != nil {
		return "", pathError(tool, args.Path, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s: %q is a file, not a folder; use read_file to read it", tool, args.Path)
	}

	// Paths are slash-separated on every system: that is what fs.FS wants,
	// and what the model is used to.
	dir := filepath.ToSlash(name)
	var entries []string
	truncated := false
	// Entries stop at MaxListEntries, or earlier when their paths would not
	// fit the output the model reads (long names, deep trees).
	budget, used, over := math.MaxInt, 0, false
	if env.OutputMax > 0 {
		budget = env.OutputMax - noteRoom
	}
	full := func() bool { return len(entries) == MaxListEntries || over }
	add := func(p string, d fs.DirEntry) {
		if isDirEntry(root, p, d) {
			p += "/"
		}
		if used+len(p)+1 > budget {
			over = true // this entry is left out, and so are the next
			return
		}
		entries = append(entries, p)
		used += len(p) + 1
	}
	if args.Recursive {
		// WalkDir does not follow links to folders, so a link loop cannot
		// make it run forever; such links are listed, not entered.
		err = fs.WalkDir(root.FS(), dir, func(p string, d fs.DirEntry, err error) error {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return ctxErr
			}
			if p == dir {
				return err // the folder itself cannot be read
			}
			if err != nil {
				// A subfolder that cannot be read: it was listed on the
				// first call, before WalkDir tried to read it.
				return fs.SkipDir
			}
			if full() {
				truncated = true
				return fs.SkipAll
			}
			add(p, d)
			return nil
		})
	} else {
		var des []fs.DirEntry
		des, err = fs.ReadDir(root.FS(), dir)
		for _, d := range des {
			if full() {
				truncated = true
				break
			}
			add(path.Join(dir, d.Name()), d)
		}
	}
	if err != nil {
		return "", pathError(tool, args.Path, err)
	}
	truncated = truncated || over // the last entry may not have fit

	slices.Sort(entries)
	if len(entries) == 0 {
		return fmt.Sprintf("%s is empty", describeFolder(args.Path)), nil
	}
	out := strings.Join(entries, "\n")
	if truncated {
		out += fmt.Sprintf("\n[list_files: stopped after %d entries; list a subfolder to see more]", len(entries))
	}
	return out, nil
}

// isDirEntry reports whether an entry is a folder, or a link to one inside
// the workspace (the root refuses to follow links that lead out).
func isDirEntry(root *os.Root, p string, d fs.DirEntry) bool {
	if d.Type()&fs.ModeSymlink == 0 {
		return d.IsDir()
	}
	fi, err := root.Stat(filepath.FromSlash(p))
	return err == nil && fi.IsDir()
}

func describeFolder(p string) string {
	if filepath.Clean(p) == "." {
		return "the workspace"
	}
	return fmt.Sprintf("folder %q", p)
}

func readFile(ctx context.Context, env Env, raw json.RawMessage) (string, error) {
	const tool = "read_file"
	var args struct {
		Path   string `json:"path"`
		Offset int64  `json:"offset"`
		Limit  *int64 `json:"limit"`
	}
	if err := DecodeArgs(readFileSpec, raw, &args); err != nil {
		return "", err
	}
	// The schema's minimums keep offset at 0 or more and limit at 1 or more.
	limit := readLimit(env)
	if args.Limit != nil {
		limit = min(limit, *args.Limit)
	}
	root, name, err := env.Workspace.openPath(tool, args.Path)
	if err != nil {
		return "", err
	}

	// Stat before Open: opening a named pipe would wait for a writer.
	fi, err := root.Stat(name)
	if err != nil {
		return "", pathError(tool, args.Path, err)
	}
	if fi.IsDir() {
		return "", fmt.Errorf("%s: %q is a folder; use list_files to see what it contains", tool, args.Path)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s: %q is not a regular file (it is a %s); read_file reads files only", tool, args.Path, fileKind(fi.Mode()))
	}
	f, err := root.Open(name)
	if err != nil {
		return "", pathError(tool, args.Path, err)
	}
	defer f.Close()
	size := fi.Size()

	head, err := readHead(f)
	if err != nil {
		return "", pathError(tool, args.Path, err)
	}
	if problem := textProblem(head, 0); problem != "" {
		return "", fmt.Errorf("%s: %q %s (the file has %d bytes); read_file returns text only", tool, args.Path, problem, size)
	}
	if args.Offset > size {
		return "", fmt.Errorf("%s: offset %d is past the end of %q, which has %d bytes", tool, args.Offset, args.Path, size)
	}
	if _, err := f.Seek(args.Offset, io.SeekStart); err != nil {
		return "", pathError(tool, args.Path, err)
	}
	// A few bytes past the limit tell whether there is more, and complete
	// a character that straddles it.
	data, err := io.ReadAll(io.LimitReader(f, limit+utf8.UTFMax))
	if err != nil {
		return "", pathError(tool, args.Path, err)
	}

	// An offset chosen by the model may fall inside a character: start at
	// the next one. The end is cut where a character begins, but never to
	// nothing, or reading on from the note would not move.
	start := args.Offset
	if start > 0 {
		skip := min(text.NextRuneStart(data, 0), utf8.UTFMax-1)
		data, start = data[skip:], start+int64(skip)
	}
	more := int64(len(data)) > limit
	if more {
		cut := text.CutIndex(string(data), int(limit))
		if cut == 0 {
			_, cut = utf8.DecodeRune(data)
		}
		data = data[:cut]
	}
	if problem := textProblem(data, start); problem != "" {
		return "", fmt.Errorf("%s: %q %s; read_file returns text only", tool, args.Path, problem)
	}

	end := start + int64(len(data))
	out := string(data)
	switch {
	case more:
		out += fmt.Sprintf("\n[read_file: %d bytes from offset %d of the file's %s; call read_file with offset %d to read on]", len(data), start, sizeText(size, end), end)
	case start > 0:
		out += fmt.Sprintf("\n[read_file: %d bytes from offset %d, up to the end of the file]", len(data), start)
	}
	return out, nil
}

// readLimit is how many bytes of a file one read_file call returns at most:
// MaxReadBytes, or less when the worker keeps tool output shorter.
func readLimit(env Env) int64 {
	n := MaxReadBytes
	if env.OutputMax > 0 {
		n = min(n, env.OutputMax-noteRoom)
	}
	return int64(max(n, 1))
}

// readHead reads the first block of f, where a binary file shows itself,
// without a character cut at its end. It leaves f's offset anywhere.
func readHead(f *os.File) ([]byte, error) {
	block := make([]byte, sniffBytes+utf8.UTFMax)
	n, err := io.ReadFull(f, block)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, err
	}
	if n > sniffBytes {
		n = text.CutIndex(string(block[:n]), sniffBytes)
	}
	return block[:n], nil
}

// textProblem says why data, which starts at byte base of a file, is not
// text, or returns "": a NUL byte, or bytes that are not UTF-8.
func textProblem(data []byte, base int64) string {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == 0:
			return fmt.Sprintf("looks like a binary file: byte %d is NUL", base+int64(i))
		case r == utf8.RuneError && size == 1:
			return fmt.Sprintf("is not UTF-8 text: byte %d is not part of a UTF-8 character", base+int64(i))
		}
		i += size
	}
	return ""
}

// sizeText is a file's size for read_file's note: "N", or "N or more" when
// the file grew while it was read.
func sizeText(size, end int64) string {
	if size < end {
		return fmt.Sprintf("%d or more", end)
	}
	return fmt.Sprint(size)
}

// fileKind names a file that is neither a regular file nor a folder.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// writeArgs are write_file's arguments.
type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

func writeFile(ctx context.Context, env Env, raw json.RawMessage) (string, error) {
	const tool = "write_file"
	var args writeArgs
	if err := DecodeArgs(writeFileSpec, raw, &args); err != nil {
		return "", err
	}
	root, name, to, err := writeTarget(env, args)
	if err != nil {
		return "", err
	}
	if parent := filepath.Dir(to.name); parent != "." {
		if err := root.MkdirAll(parent, 0o755); err != nil {
			return "", pathError(tool, args.Path, err)
		}
	}
	// The diff is of the file as it was just before the write, shown only
	// once the write is done.
	var diff string
	if env.ShowDiff != nil {
		diff, _ = writeDiff(root, to.name, args.Content)
	}
	if err := writeChecked(root, name, to.name, []byte(args.Content), env.VCSWrites); err != nil {
		return "", pathError(tool, args.Path, err)
	}
	if env.ShowDiff != nil {
		env.ShowDiff(diff)
	}
	return fmt.Sprintf("wrote %d bytes to %s", len(args.Content), filepath.ToSlash(name)), nil
}

// writeTarget checks a write_file call before anything is written (its
// preview's checks too, writepreview.go): the path, the size, and the file
// the write would land on (to, in root, where name, the path cleaned,
// resolves), which must be a regular file or none.
func writeTarget(env Env, args writeArgs) (root *os.Root, name string, to resolved, err error) {
	const tool = "write_file"
	root, name, err = env.Workspace.openPath(tool, args.Path)
	if err != nil {
		return nil, "", resolved{}, err
	}
	if len(args.Content) > MaxWriteBytes {
		return nil, "", resolved{}, fmt.Errorf("%s: the content is %d bytes; one call writes at most %d", tool, len(args.Content), MaxWriteBytes)
	}
	// Decide on the file the write would land on, not on the path's text:
	// a checkout may carry a link such as notes -> .git.
	if to, err = resolve(root, name); err != nil {
		return nil, "", resolved{}, pathError(tool, args.Path, err)
	}
	if to.name == "." {
		return nil, "", resolved{}, fmt.Errorf("%s: path %q is the workspace itself, not a file", tool, args.Path)
	}
	if err := vcsWrite(tool, args.Path, to, env.VCSWrites); err != nil {
		return nil, "", resolved{}, err
	}
	// Lstat, not Stat: opening a named pipe would block the call for good.
	if fi, err := root.Lstat(to.name); err == nil {
		switch m := fi.Mode(); {
		case m.IsDir():
			return nil, "", resolved{}, fmt.Errorf("%s: %q is a folder, not a file", tool, args.Path)
		case !m.IsRegular():
			how := "is"
			if to.link {
				how = "leads to"
			}
			return nil, "", resolved{}, fmt.Errorf("%s: %q %s a %s, not a regular file", tool, args.Path, how, fileKind(m))
		}
	}
	return root, name, to, nil
}

// vcsWrite refuses a write that resolves (to) inside version control
// metadata, unless the operator allows it (allowed).
func vcsWrite(tool, path string, to resolved, allowed bool) error {
	if to.vcs == "" || allowed {
		return nil
	}
	how := "is inside " + to.vcs
	if vcsFolder(path) == "" {
		how = "leads inside " + to.vcs + " through a symbolic link"
	}
	return fmt.Errorf("%s: %q %s, version control metadata, which this worker does not let tools write (its hooks and config run commands when a person next uses the repository)", tool, path, how)
}

// writeChecked writes data to the file target, where name resolved, and
// makes sure, once the file is open and before anything is written, that it
// is the file name resolves to now, still outside version control metadata
// unless allowed: a link swapped in on the way since the check is refused.
// A file the open created there stays, empty.
func writeChecked(root *os.Root, name, target string, data []byte, allowVCS bool) error {
	f, err := root.OpenFile(target, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err == nil {
		var now resolved
		if now, err = recheck(root, name, fi); err == nil && now.vcs != "" && !allowVCS {
			err = &fs.PathError{Op: "open", Path: name, Err: errSwapped}
		}
	}
	if err == nil {
		err = f.Truncate(0)
	}
	if err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// pathError says what went wrong with the path the model gave, without the
// worker's own paths, which the model has no use for.
func pathError(tool, name string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: %q does not exist", tool, name)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: %q: permission denied", tool, name)
	case isEscape(err):
		return fmt.Errorf("%s: path %q leads outside the workspace", tool, name)
	}
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return fmt.Errorf("%s: %q: %w", tool, name, pe.Err)
	}
	return fmt.Errorf("%s: %q: %w", tool, name, err)
}

// isEscape reports whether an os.Root refused a path that leads out of it.
// The os package does not export that error, so it is recognised by its text;
// Clean catches the usual cases first, with its own message.
func isEscape(err error) bool {
	pe, ok := errors.AsType[*fs.PathError](err)
	return errors.Is(err, errLeadsOut) || ok && pe.Err.Error() == "path escapes from parent"
}

// openPath checks a path from the model: the first step of every built-in
// tool. It returns the workspace's open folder, which the tool leaves open,
// and the path cleaned.
func (w Workspace) openPath(tool, path string) (*os.Root, string, error) {
	name, err := w.Clean(path)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", tool, err)
	}
	return w.root, name, nil
}
