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
	// CLIVersion is the github.com/temporalio/cli release pinned in tools/go.mod. It is part
	// of the cache path so that bumping the pin builds a new binary instead of silently
	// reusing the old one (a test checks the two agree).
	CLIVersion = "v1.5.1"

	// CLIPackage is the main package of the Temporal CLI.
	CLIPackage = "github.com/temporalio/cli/cmd/temporal"

	// EnvBinary names an environment variable that, when set, points at a temporal CLI
	// executable to use instead of the cached build (for machines that have one already).
	EnvBinary = "TODOFLOW_TEMPORAL_CLI"
)

// progressEvery is how often a long build or lock wait says it is still alive.
const progressEvery = 30 * time.Second

// CachePath is where the Temporal CLI is built and looked for:
// os.UserCacheDir()/todoflow/temporal-cli-<CLIVersion>/temporal. .ci/run computes the same
// path as ${XDG_CACHE_HOME:-$HOME/.cache}/todoflow/temporal-cli-<CLIVersion>/temporal.
func CachePath() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("locating the user cache folder for the Temporal CLI: %w", err)
	}
	return filepath.Join(dir, "todoflow", "temporal-cli-"+CLIVersion, "temporal"), nil
}

// BinaryPath returns the path of a temporal CLI executable to run the dev server with,
// the fastest way there is, and says on progress (nil discards it) which one it picked
// and why:
//
//  1. $TODOFLOW_TEMPORAL_CLI, as it is: the user asked for it (an unusable one is an error);
//  2. a `temporal` on PATH whose `--version` is one todoflow supports ([checkSupported]);
//     one that is not is passed over with a one-line reason;
//  3. the cached build, [CachePath];
//  4. a build from tools/go.mod into the cache: minutes, so it happens at most once per
//     machine even with many concurrent callers (a file lock beside the binary).
func BinaryPath(ctx context.Context, progress io.Writer) (string, error) {
	return findBinary(ctx, progress, buildCLI)
}

func findBinary(ctx context.Context, progress io.Writer, build buildFunc) (string, error) {
	if progress == nil {
		progress = io.Discard
	}
	if p := os.Getenv(EnvBinary); p != "" {
		if err := checkExecutable(p); err != nil {
			// The user asked for this binary explicitly; building another one would hide
			// their mistake for 7 minutes.
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
// that share bin's folder. build writes to a temporary file that is renamed into place, so
// nobody ever sees a half-written binary.
func ensureBuilt(ctx context.Context, bin string, progress io.Writer, build buildFunc) (string, error) {
	if checkExecutable(bin) == nil {
		return bin, nil
	}
	if progress == nil {
		progress = io.Discard
	}
	dir := filepath.Dir(bin)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating the Temporal CLI cache folder: %w", err)
	}
	unlock, err := lockFile(ctx, filepath.Join(dir, "build.lock"), progress, bin)
	if err != nil {
		return "", err
	}
	defer unlock()

	// Another process may have finished the build while we waited for the lock.
	if checkExecutable(bin) == nil {
		return bin, nil
	}

	tmp := fmt.Sprintf("%s.tmp.%d", bin, os.Getpid())
	_ = os.Remove(tmp) // a leftover from a crashed build of ours
	fmt.Fprintf(progress, "todoflow: building the Temporal dev server (first run only, about 7 minutes on 2 cores) into %s\n", bin)
	start := time.Now()
	stop := every(progressEvery, func() {
		fmt.Fprintf(progress, "todoflow: still building the Temporal dev server (%s elapsed)\n", since(start))
	})
	err = build(ctx, tmp)
	stop()
	if err != nil {
		_ = os.Remove(tmp)
		return "", err
	}
	if err := checkExecutable(tmp); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("the Temporal CLI build produced no usable binary: %w", err)
	}
	if err := os.Rename(tmp, bin); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("installing the built Temporal CLI: %w", err)
	}
	fmt.Fprintf(progress, "todoflow: built the Temporal dev server in %s\n", since(start))
	return bin, nil
}

// lockFile takes an exclusive flock on path, waiting for ctx. flock rather than a lock
// file's mere existence because the kernel drops it when the holder dies, so a build
// killed halfway never leaves the next caller stuck.
func lockFile(ctx context.Context, path string, progress io.Writer, bin string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the Temporal CLI build lock: %w", err)
	}
	start := time.Now()
	lastNote := time.Time{}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				_ = f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			_ = f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		// Polling instead of a blocking flock keeps ctx cancellation working.
		if lastNote.IsZero() {
			fmt.Fprintf(progress, "todoflow: another process is building the Temporal dev server into %s; waiting for it\n", bin)
			lastNote = time.Now()
		} else if time.Since(lastNote) >= progressEvery {
			fmt.Fprintf(progress, "todoflow: still waiting for the Temporal dev server build (%s elapsed)\n", since(start))
			lastNote = time.Now()
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("waiting for another process to build the Temporal CLI: %w", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// buildCLI runs `go build -modfile=<repo>/tools/go.mod -o out github.com/temporalio/cli/cmd/temporal`
// from the repository root: the CLI cannot be built in the root module (see doc.go).
func buildCLI(ctx context.Context, out string) error {
	root, err := RepoRoot()
	if err != nil {
		return fmt.Errorf("the Temporal CLI is not built yet and cannot be built: %w", err)
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("the Temporal CLI is not built yet and there is no go command to build it (install Go or set %s): %w", EnvBinary, err)
	}
	modfile := filepath.Join(root, "tools", "go.mod")
	cmd := exec.CommandContext(ctx, goCmd, "build", "-modfile="+modfile, "-o", out, CLIPackage)
	cmd.Dir = root
	// -modfile is refused in workspace mode; a go.work somewhere above must not break us.
	cmd.Env = append(os.Environ(), "GOWORK=off")
	stderr := newTail(60)
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("building the Temporal CLI: %w", ctx.Err())
		}
		return fmt.Errorf("building the Temporal CLI (go build -modfile=%s -o %s %s, in %s): %w\n%s",
			modfile, out, CLIPackage, root, err, stderr.String())
	}
	return nil
}

// RepoRoot finds the todoflow repository: the nearest folder, walking up from the working
// directory, that holds a tools/go.mod pinning the Temporal CLI. When the working directory
// is elsewhere (a binary run from /tmp), it walks up from this source file's folder, which
// works for `go run` and `go test` on the machine that has the checkout.
func RepoRoot() (string, error) {
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
		CLIPackage, starts, EnvBinary)
}

// findRoot walks up from dir to the first folder whose tools/go.mod mentions the CLI module.
func findRoot(dir string) (string, bool) {
	dir = filepath.Clean(dir)
	for {
		b, err := os.ReadFile(filepath.Join(dir, "tools", "go.mod"))
		if err == nil && bytes.Contains(b, []byte("github.com/temporalio/cli")) {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// checkExecutable says why path is not a runnable regular file, or returns nil.
func checkExecutable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not executable", path)
	}
	return nil
}

// every calls f every d until the returned stop is called; stop waits for a running f, so
// nothing is written to a progress writer after stop returns.
func every(d time.Duration, f func()) (stop func()) {
	done := make(chan struct{})
	exited := make(chan struct{})
	t := time.NewTicker(d)
	go func() {
		defer close(exited)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				f()
			}
		}
	}()
	return func() {
		close(done)
		<-exited
	}
}

func since(t time.Time) string { return time.Since(t).Round(time.Second).String() }
