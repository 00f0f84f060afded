package devserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

const (
	// CLIVersion is the github.com/temporalio/cli release pinned in tools/go.mod (a test
	// checks they agree). It is part of the cache path, so bumping the pin builds anew.
	CLIVersion = "v1.5.1"

	cliPackage = "github.com/temporalio/cli/cmd/temporal"

	// EnvBinary names an environment variable that points at a temporal CLI to use.
	EnvBinary = "TODOFLOW_TEMPORAL_CLI"
)

// progressEvery is how often a long build or lock wait says it is still alive.
const progressEvery = 30 * time.Second

// CachePath is where the Temporal CLI is built and looked for:
// os.UserCacheDir()/todoflow/temporal-cli-<CLIVersion>/temporal, which .ci/run computes too.
func CachePath() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("locating the user cache folder for the Temporal CLI: %w", err)
	}
	return filepath.Join(dir, "todoflow", "temporal-cli-"+CLIVersion, "temporal"), nil
}

// BinaryPath returns the temporal CLI to run the dev server with, the fastest way there
// is, and says on progress (nil discards it) which one and why: $TODOFLOW_TEMPORAL_CLI as
// it is; a `temporal` on PATH whose `--version` is supported ([checkSupported]), else a
// line on why not; the cached build ([CachePath]); a build from tools/go.mod into the cache.
// (The SDK's testsuite download is not on the list: these machines cannot reach it.)
func BinaryPath(ctx context.Context, progress io.Writer) (string, error) {
	return findBinary(ctx, progress, buildCLI)
}

func findBinary(ctx context.Context, progress io.Writer, build buildFunc) (string, error) {
	if progress == nil {
		progress = io.Discard
	}
	if p := os.Getenv(EnvBinary); p != "" {
		if err := checkExecutable(p); err != nil {
			// Asked for explicitly: building another one would hide the mistake for minutes.
			return "", fmt.Errorf("%s=%q: %w", EnvBinary, p, err)
		}
		fmt.Fprintf(progress, "todoflow: Temporal dev server: %s (set by %s)\n", p, EnvBinary)
		return p, nil
	}
	if p, err := exec.LookPath("temporal"); err == nil {
		v, err := readVersion(ctx, p)
		if err == nil {
			err = checkSupported(v)
		}
		if err == nil {
			fmt.Fprintf(progress, "todoflow: Temporal dev server: %s (the temporal CLI on PATH, %s)\n", p, v)
			return p, nil
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		fmt.Fprintf(progress, "todoflow: not using the temporal CLI on PATH (%s): %v\n", p, err)
	}
	bin, err := CachePath()
	if err != nil {
		return "", err
	}
	if checkExecutable(bin) == nil {
		fmt.Fprintf(progress, "todoflow: Temporal dev server: %s (the cached build of CLI %s)\n", bin, CLIVersion)
		return bin, nil
	}
	fmt.Fprintf(progress, "todoflow: no usable temporal CLI on PATH and no cached build: building CLI %s from tools/go.mod "+
		"(a temporal CLI %s or newer on PATH, or %s, skips this)\n", CLIVersion, strings.TrimPrefix(CLIVersion, "v"), EnvBinary)
	return ensureBuilt(ctx, bin, progress, build)
}

// buildFunc builds the CLI into out.
type buildFunc func(ctx context.Context, out string) error

// ensureBuilt returns bin once it exists, calling build at most once across all processes
// that share bin's folder (a flock beside it). build writes a temporary file renamed into
// place, so nobody ever runs a half-written binary.
func ensureBuilt(ctx context.Context, bin string, progress io.Writer, build buildFunc) (string, error) {
	if checkExecutable(bin) == nil {
		return bin, nil
	}
	if progress == nil {
		progress = io.Discard
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", fmt.Errorf("creating the Temporal CLI cache folder: %w", err)
	}
	unlock, err := waitLock(ctx, filepath.Join(filepath.Dir(bin), "build.lock"), progress, bin)
	if err != nil {
		return "", err
	}
	defer unlock()
	if checkExecutable(bin) == nil { // built while we waited for the lock
		return bin, nil
	}

	tmp := fmt.Sprintf("%s.tmp.%d", bin, os.Getpid())
	fmt.Fprintf(progress, "todoflow: building the Temporal dev server (first run only, about 7 minutes on 2 cores) into %s\n", bin)
	start := time.Now()
	built := make(chan error, 1)
	go func() { built <- build(ctx, tmp) }()
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for waiting := true; waiting; {
		select {
		case <-tick.C:
			fmt.Fprintf(progress, "todoflow: still building the Temporal dev server (%s elapsed)\n", since(start))
		case err = <-built:
			waiting = false
		}
	}
	if err == nil {
		if err = checkExecutable(tmp); err != nil {
			err = fmt.Errorf("the Temporal CLI build produced no usable binary: %w", err)
		} else if err = os.Rename(tmp, bin); err != nil {
			err = fmt.Errorf("installing the built Temporal CLI: %w", err)
		}
	}
	if err != nil {
		_ = os.Remove(tmp)
		return "", err
	}
	fmt.Fprintf(progress, "todoflow: built the Temporal dev server in %s\n", since(start))
	return bin, nil
}

// waitLock takes the flock on path, polling so that ctx can cancel the wait.
func waitLock(ctx context.Context, path string, progress io.Writer, bin string) (unlock func(), err error) {
	start, noted := time.Now(), time.Time{}
	for {
		unlock, err := tryLock(path)
		if err == nil {
			return unlock, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if noted.IsZero() {
			fmt.Fprintf(progress, "todoflow: another process is building the Temporal dev server into %s; waiting for it\n", bin)
			noted = time.Now()
		} else if time.Since(noted) >= progressEvery {
			fmt.Fprintf(progress, "todoflow: still waiting for the Temporal dev server build (%s elapsed)\n", since(start))
			noted = time.Now()
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for another process to build the Temporal CLI: %w", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// buildCLI runs `go build -modfile=tools/go.mod -o out github.com/temporalio/cli/cmd/temporal`
// in the repository.
func buildCLI(ctx context.Context, out string) error {
	root, err := repoRoot()
	if err != nil {
		return fmt.Errorf("the Temporal CLI is not built yet and cannot be built: %w", err)
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("the Temporal CLI is not built yet and there is no go command to build it (install Go or set %s): %w", EnvBinary, err)
	}
	modfile := filepath.Join(root, "tools", "go.mod")
	cmd := exec.CommandContext(ctx, goCmd, "build", "-modfile="+modfile, "-o", out, cliPackage)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK=off") // -modfile is refused in workspace mode
	stderr := newTail(60)
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("building the Temporal CLI: %w", ctx.Err())
		}
		return fmt.Errorf("building the Temporal CLI (go build -modfile=%s -o %s %s, in %s): %w\n%s",
			modfile, out, cliPackage, root, err, stderr.String())
	}
	return nil
}

// repoRoot finds the todoflow repository, the nearest folder with a tools/go.mod pinning
// the CLI, above the working directory or else above this source file (for `go run` and
// `go test` from elsewhere on the machine that has the checkout).
func repoRoot() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	// With -trimpath the recorded file name is module-relative and useless here.
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	for _, s := range starts {
		if root, ok := findRoot(s); ok {
			return root, nil
		}
	}
	return "", fmt.Errorf("no todoflow repository (a folder with tools/go.mod pinning %s) above %q: run from inside the repository or set %s",
		cliPackage, starts, EnvBinary)
}

// findRoot walks up from dir to the first folder whose tools/go.mod mentions the CLI module.
func findRoot(dir string) (string, bool) {
	for dir = filepath.Clean(dir); ; dir = filepath.Dir(dir) {
		b, err := os.ReadFile(filepath.Join(dir, "tools", "go.mod"))
		if err == nil && bytes.Contains(b, []byte("github.com/temporalio/cli")) {
			return dir, true
		}
		if filepath.Dir(dir) == dir {
			return "", false
		}
	}
}

// checkExecutable says why path is not a runnable regular file, or returns nil.
func checkExecutable(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file", path)
	case fi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("%s is not executable", path)
	}
	return nil
}

func since(t time.Time) string { return time.Since(t).Round(time.Second).String() }
