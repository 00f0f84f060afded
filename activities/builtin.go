package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/todoflow/todoflow/model"
)

// Limits of the built-in tools: their results go into the transcript, which
// is sent to the model on every turn and stored in workflow history, so a
// large folder or file must not flood it.
const (
	// MaxListEntries is the most entries list_files returns.
	MaxListEntries = 1000
	// MaxReadBytes is the most bytes of a file read_file returns.
	MaxReadBytes = 256 << 10
)

// builtins returns the tools of DefaultRegistry.
func builtins() []Tool {
	return []Tool{
		NewTool(listFilesSpec, listFiles),
		NewTool(readFileSpec, readFile),
		NewTool(writeFileSpec, writeFile),
	}
}

var listFilesSpec = model.ToolSpec{
	Name: "list_files",
	Description: "List what a folder of the workspace contains. Each line is one path, " +
		"relative to the workspace, so it can be passed to read_file as it is; folders end with \"/\". " +
		fmt.Sprintf("At most %d entries are returned.", MaxListEntries),
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
		fmt.Sprintf("Only the first %d KiB of a larger file are returned, followed by a note saying so. ", MaxReadBytes>>10) +
		"Files that are not UTF-8 text (images, archives, ...) are refused.",
	Parameters: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "The file to read, relative to the workspace."}
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

func listFiles(ctx context.Context, env ToolEnv, raw json.RawMessage) (string, error) {
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
	defer root.Close()

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
	add := func(p string, d fs.DirEntry) {
		if isDirEntry(root, p, d) {
			p += "/"
		}
		entries = append(entries, p)
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
			if len(entries) == MaxListEntries {
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
			if len(entries) == MaxListEntries {
				truncated = true
				break
			}
			add(path.Join(dir, d.Name()), d)
		}
	}
	if err != nil {
		return "", pathError(tool, args.Path, err)
	}

	slices.Sort(entries)
	if len(entries) == 0 {
		return fmt.Sprintf("%s is empty", describeFolder(args.Path)), nil
	}
	out := strings.Join(entries, "\n")
	if truncated {
		out += fmt.Sprintf("\n[list_files: stopped after %d entries; list a subfolder to see more]", MaxListEntries)
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

func readFile(ctx context.Context, env ToolEnv, raw json.RawMessage) (string, error) {
	const tool = "read_file"
	var args struct {
		Path string `json:"path"`
	}
	if err := DecodeArgs(readFileSpec, raw, &args); err != nil {
		return "", err
	}
	root, name, err := env.Workspace.openPath(tool, args.Path)
	if err != nil {
		return "", err
	}
	defer root.Close()

	f, err := root.Open(name)
	if err != nil {
		return "", pathError(tool, args.Path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", pathError(tool, args.Path, err)
	}
	if fi.IsDir() {
		return "", fmt.Errorf("%s: %q is a folder; use list_files to see what it contains", tool, args.Path)
	}
	// Read one byte more than the limit to know whether there is more,
	// without trusting the size (it may change, or be 0 for special files).
	data, err := io.ReadAll(io.LimitReader(f, MaxReadBytes+1))
	if err != nil {
		return "", pathError(tool, args.Path, err)
	}
	truncated := len(data) > MaxReadBytes
	if truncated {
		data = data[:MaxReadBytes]
		// Do not count a character cut in half at the limit as binary.
		for i := 0; i < utf8.UTFMax-1 && len(data) > 0 && !utf8.Valid(data); i++ {
			data = data[:len(data)-1]
		}
	}
	if !utf8.Valid(data) || slices.Contains(data, 0) {
		return "", fmt.Errorf("%s: %q is not UTF-8 text (it looks like a binary file of %d bytes); read_file returns text only", tool, args.Path, fi.Size())
	}
	out := string(data)
	if truncated {
		size := fi.Size()
		if size <= MaxReadBytes {
			size = MaxReadBytes + 1 // the file grew, or reports no size
		}
		out += fmt.Sprintf("\n[read_file: truncated; this is the first %d bytes of the file's %d or more]", len(data), size)
	}
	return out, nil
}

func writeFile(ctx context.Context, env ToolEnv, raw json.RawMessage) (string, error) {
	const tool = "write_file"
	var args struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	if err := DecodeArgs(writeFileSpec, raw, &args); err != nil {
		return "", err
	}
	root, name, err := env.Workspace.openPath(tool, args.Path)
	if err != nil {
		return "", err
	}
	defer root.Close()
	if name == "." {
		return "", fmt.Errorf("%s: path %q is the workspace itself, not a file", tool, args.Path)
	}

	if parent := filepath.Dir(name); parent != "." {
		if err := root.MkdirAll(parent, 0o755); err != nil {
			return "", pathError(tool, args.Path, err)
		}
	}
	if fi, err := root.Stat(name); err == nil && fi.IsDir() {
		return "", fmt.Errorf("%s: %q is a folder, not a file", tool, args.Path)
	}
	if err := root.WriteFile(name, []byte(args.Content), 0o644); err != nil {
		return "", pathError(tool, args.Path, err)
	}
	return fmt.Sprintf("wrote %d bytes to %s", len(args.Content), filepath.ToSlash(name)), nil
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
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %q: %w", tool, name, pe.Err)
	}
	return fmt.Errorf("%s: %q: %w", tool, name, err)
}

// isEscape reports whether an os.Root refused a path that leads out of it.
// The os package does not export that error, so it is recognised by its text;
// Clean catches the usual cases first, with its own message.
func isEscape(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Err.Error() == "path escapes from parent"
}

// openPath checks a path from the model and opens the workspace for it: the
// first steps of every built-in tool. The caller closes the root.
func (w Workspace) openPath(tool, path string) (*os.Root, string, error) {
	name, err := w.Clean(path)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", tool, err)
	}
	root, err := w.Open()
	if err != nil {
		return nil, "", err
	}
	return root, name, nil
}
