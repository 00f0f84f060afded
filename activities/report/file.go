package report

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/todoflow/todoflow/api"
	"go.temporal.io/sdk/temporal"
)

// reportFile appends the event as one JSON line to <folder>/<path>. The
// file is opened through an os.Root of the folder, so that a symbolic link
// cannot lead the write out of it either.
func reportFile(rec Record, cfg *api.FileReport, folder func() (string, error)) error {
	dir, err := folder()
	if err != nil {
		err = fmt.Errorf("file reporter: %w", err)
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeConfig, nil)
	}
	line, err := rec.line()
	if err != nil {
		return err
	}
	line = append(line, '\n')
	retryable := func(err error) error {
		err = fmt.Errorf("file reporter: %s: %w", filepath.Join(dir, cfg.Path), err)
		return temporal.NewApplicationError(err.Error(), ErrTypeRetryable)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return retryable(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return retryable(err)
	}
	defer root.Close()
	if sub := filepath.Dir(cfg.Path); sub != "." {
		if err := root.MkdirAll(sub, 0o755); err != nil {
			return retryable(err)
		}
	}
	f, err := root.OpenFile(cfg.Path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return retryable(err)
	}
	// One write per line: appends from concurrent reports do not interleave.
	_, err = f.Write(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return retryable(err)
	}
	return nil
}
