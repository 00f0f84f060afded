package main

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Code levers are compared in the same run by running the worker of an
// earlier revision: the program builds itself as of that git revision
// (once; the binary is kept in the user's cache folder) and starts that
// binary as the worker process. The driver, the server and the bare
// workflow are the same for every revision, so the ratios compare the
// agent's code alone.

// revision is a worker built from an earlier commit, named for the table.
type revision struct {
	name, rev string
	bin       string // built by buildRevisions
}

// parseRevisions reads -revs: NAME=REV pairs, comma-separated.
func parseRevisions(s string) ([]revision, error) {
	var out []revision
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		name, rev, ok := strings.Cut(part, "=")
		if !ok || name == "" || rev == "" {
			return nil, fmt.Errorf("-revs: %q is not NAME=REVISION", part)
		}
		out = append(out, revision{name: name, rev: rev})
	}
	return out, nil
}

// buildRevisions builds the bench program of each revision, or finds it
// built.
func buildRevisions(ctx context.Context, revs []revision, progress io.Writer) error {
	root, err := gitOutput(ctx, "", "rev-parse", "--show-toplevel")
	if err != nil {
		return fmt.Errorf("-revs needs the program's git repository (run it from the worktree): %w", err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return err
	}
	for i, r := range revs {
		full, err := gitOutput(ctx, root, "rev-parse", "--verify", r.rev+"^{commit}")
		if err != nil {
			return fmt.Errorf("-revs %s=%s: %w", r.name, r.rev, err)
		}
		bin := filepath.Join(cache, "todoflow", "bench", full, "bench")
		if _, err := os.Stat(bin); err == nil {
			revs[i].bin = bin
			continue
		}
		fmt.Fprintf(progress, "bench: building the worker of %s (%s) into %s\n", r.name, full[:12], bin)
		src, err := os.MkdirTemp("", "todoflow-bench-src-*")
		if err != nil {
			return err
		}
		err = extract(ctx, root, full, src)
		if err == nil {
			build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./testsuite/bench")
			build.Dir, build.Stdout, build.Stderr = src, progress, progress
			if err = build.Run(); err != nil {
				err = fmt.Errorf("build %s: %w", r.rev, err)
			}
		}
		_ = os.RemoveAll(src)
		if err != nil {
			return err
		}
		revs[i].bin = bin
	}
	return nil
}

func gitOutput(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return "", fmt.Errorf("git %s: %s", strings.Join(args, " "), strings.TrimSpace(string(exit.Stderr)))
		}
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// extract writes the tree of commit rev into dir.
func extract(ctx context.Context, root, rev, dir string) error {
	cmd := exec.CommandContext(ctx, "git", "archive", "--format=tar", rev)
	cmd.Dir = root
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	tr := tar.NewReader(out)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			_ = cmd.Wait()
			return fmt.Errorf("git archive %s: %w", rev, err)
		}
		path := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(path, filepath.Clean(dir)+string(filepath.Separator)) {
			continue
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(path, 0o755)
		case tar.TypeReg:
			err = writeFile(path, tr, os.FileMode(h.Mode)&0o777)
		}
		if err != nil {
			_ = cmd.Wait()
			return err
		}
	}
	return cmd.Wait()
}

func writeFile(path string, r io.Reader, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
