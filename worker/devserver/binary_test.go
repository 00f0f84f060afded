package devserver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestCachePathFollowsXDGCacheHome(t *testing.T) {
	// .ci/run computes ${XDG_CACHE_HOME:-$HOME/.cache}/todoflow/temporal-cli-<v>/temporal;
	// both must name the same file or CI builds a binary nobody uses.
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", dir)
	got, err := CachePath()
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "todoflow", "temporal-cli-v1.5.1", "temporal")
	if got != want {
		t.Errorf("CachePath() = %q, want %q", got, want)
	}
}

func TestCLIVersionMatchesToolsGoMod(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "tools", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*github\.com/temporalio/cli (v\S+)`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("tools/go.mod does not require github.com/temporalio/cli")
	}
	if got := string(m[1]); got != CLIVersion {
		t.Errorf("tools/go.mod pins the CLI at %s but CLIVersion (part of the cache path) is %s: update both", got, CLIVersion)
	}
}

// repoTree makes root/tools/go.mod (pinning the CLI), root/a/b, and an unrelated
// root/a/tools/go.mod that must not be mistaken for the repository.
func repoTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("tools/go.mod", "module x/tools\n\ntool github.com/temporalio/cli/cmd/temporal\n")
	write("a/tools/go.mod", "module other/tools\n")
	write("a/b/.keep", "")
	return root
}

func TestFindRoot(t *testing.T) {
	root := repoTree(t)
	tests := []struct {
		name   string
		start  string
		want   string
		wantOK bool
	}{
		{"at the root", root, root, true},
		{"below the root", filepath.Join(root, "a", "b"), root, true},
		{"past an unrelated tools/go.mod", filepath.Join(root, "a"), root, true},
		{"unclean path", filepath.Join(root, "a", "b") + "/../b/", root, true},
		{"outside", t.TempDir(), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := findRoot(tt.start)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("findRoot(%q) = %q, %v; want %q, %v", tt.start, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestRepoRoot(t *testing.T) {
	t.Run("from the working directory", func(t *testing.T) {
		root := repoTree(t)
		t.Chdir(filepath.Join(root, "a", "b"))
		got, err := repoRoot()
		if err != nil || got != root {
			t.Errorf("repoRoot() = %q, %v; want %q", got, err, root)
		}
	})
	t.Run("falls back to the source file", func(t *testing.T) {
		t.Chdir(t.TempDir())
		got, err := repoRoot()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(got, "tools", "go.mod")); err != nil {
			t.Errorf("repoRoot() = %q, which has no tools/go.mod: %v", got, err)
		}
		if _, err := os.Stat(filepath.Join(got, "worker", "devserver", "binary.go")); err != nil {
			t.Errorf("repoRoot() = %q is not this repository: %v", got, err)
		}
	})
}

// fakeBinary writes an executable shell script and returns its path.
func fakeBinary(t *testing.T, script string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "temporal")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBinaryPathFromEnv(t *testing.T) {
	exe := fakeBinary(t, "exit 0")
	notExe := filepath.Join(t.TempDir(), "temporal")
	if err := os.WriteFile(notExe, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		env     string
		wantErr string
	}{
		{"executable", exe, ""},
		{"not executable", notExe, "not executable"},
		{"missing", filepath.Join(t.TempDir(), "nope"), "no such file"},
		{"a folder", t.TempDir(), "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvBinary, tt.env)
			// An empty cache and PATH: a fallback to building would show up as a long
			// hang or a build error instead of the expected result.
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			t.Setenv("PATH", t.TempDir())
			got, err := BinaryPath(context.Background(), nil)
			if tt.wantErr == "" {
				if err != nil || got != tt.env {
					t.Errorf("BinaryPath() = %q, %v; want %q", got, err, tt.env)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), EnvBinary) {
				t.Errorf("BinaryPath() error = %v; want one naming %s and saying %q", err, EnvBinary, tt.wantErr)
			}
		})
	}
}

// TestFindBinaryOrder checks where the dev server binary comes from: the environment
// variable, then a supported `temporal` on PATH, then the cache, and only then a build;
// and that every choice, and every CLI passed over, is said in one line.
func TestFindBinaryOrder(t *testing.T) {
	const (
		release = `echo "temporal version 1.5.1 (Server 1.29.1, UI 2.42.1)"`
		newer   = `echo "temporal version 1.7.2 (Server 1.30.4, UI 2.44.0)"`
		devOK   = `echo "temporal version 0.0.0-DEV (Server 1.29.1, UI 2.42.1)"`
		devOld  = `echo "temporal version 0.0.0-DEV (Server 1.27.2, UI 2.36.0)"`
		tooOld  = `echo "temporal version 1.1.2 (Server 1.25.2, UI 2.32.0)"`
		major2  = `echo "temporal version 2.0.0 (Server 1.40.0, UI 3.0.0)"`
		garbage = `echo "usage: temporal [command]"`
		broken  = `echo "segmentation fault" >&2; exit 139`
	)
	type want struct {
		from  string // "env", "path", "cache", "build"
		log   string // in the progress lines
		built bool
	}
	tests := []struct {
		name   string
		env    bool   // TODOFLOW_TEMPORAL_CLI set to a working binary
		onPath string // script of a `temporal` on PATH; "" none
		cached bool   // the cache holds a binary
		want   want
	}{
		{"env wins over everything", true, release, true, want{"env", "(set by TODOFLOW_TEMPORAL_CLI)", false}},
		{"the pinned release on PATH", false, release, true, want{"path", "(the temporal CLI on PATH, CLI 1.5.1, Server 1.29.1)", false}},
		{"a newer 1.x on PATH", false, newer, false, want{"path", "CLI 1.7.2", false}},
		{"a development build with a recent server", false, devOK, false, want{"path", "CLI 0.0.0-DEV, Server 1.29.1", false}},
		{"too old on PATH, the cache", false, tooOld, true, want{"cache", "not using the temporal CLI on PATH", false}},
		{"too old on PATH, nothing cached: build", false, tooOld, false, want{"build", "version 1.1.2 is older than 1.5.1", true}},
		{"a development build with an old server", false, devOld, true, want{"cache", "Server 1.27.2, older than 1.29.1", false}},
		{"a major release not tested", false, major2, true, want{"cache", "version 2.0.0 is a major release", false}},
		{"not a temporal CLI", false, garbage, true, want{"cache", `cannot tell its version from "usage: temporal [command]"`, false}},
		{"a CLI that fails", false, broken, true, want{"cache", "segmentation fault", false}},
		{"nothing on PATH, the cache", false, "", true, want{"cache", "(the cached build of CLI v1.5.1)", false}},
		{"nothing at all: build", false, "", false, want{"build", "no usable temporal CLI on PATH and no cached build: building CLI v1.5.1", true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			envBin := fakeBinary(t, release)
			t.Setenv(EnvBinary, "")
			if tt.env {
				t.Setenv(EnvBinary, envBin)
			}
			pathDir := t.TempDir()
			t.Setenv("PATH", pathDir)
			pathBin := filepath.Join(pathDir, "temporal")
			if tt.onPath != "" {
				if err := os.WriteFile(pathBin, []byte("#!/bin/sh\n"+tt.onPath+"\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			cache, err := CachePath()
			if err != nil {
				t.Fatal(err)
			}
			if tt.cached {
				if err := os.MkdirAll(filepath.Dir(cache), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(cache, []byte("#!/bin/sh\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			var calls atomic.Int32
			var progress syncBuffer
			got, err := findBinary(context.Background(), &progress, fakeBuild(&calls))
			if err != nil {
				t.Fatalf("findBinary() error = %v", err)
			}
			wantPath := map[string]string{"env": envBin, "path": pathBin, "cache": cache, "build": cache}[tt.want.from]
			if got != wantPath {
				t.Errorf("findBinary() = %q; want the %s binary %q\n%s", got, tt.want.from, wantPath, progress.String())
			}
			if built := calls.Load() > 0; built != tt.want.built {
				t.Errorf("built = %v; want %v", built, tt.want.built)
			}
			log := progress.String()
			if !strings.Contains(log, tt.want.log) {
				t.Errorf("progress lacks %q:\n%s", tt.want.log, log)
			}
			if tt.want.from != "build" && !strings.Contains(log, "todoflow: Temporal dev server: "+got+" (") {
				t.Errorf("progress does not say which binary was picked and why:\n%s", log)
			}
			if strings.Contains(log, "not using") && strings.Count(log, "\n") != strings.Count(log, "todoflow: ") {
				t.Errorf("a passed-over CLI takes more than one line:\n%s", log)
			}
		})
	}
}

func TestFindBinaryHonoursContextWhileAskingTheVersion(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvBinary, "")
	t.Setenv("PATH", dir)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	pidFile := filepath.Join(t.TempDir(), "pid")
	if err := os.WriteFile(filepath.Join(dir, "temporal"), []byte("#!/bin/sh\necho $$ > "+pidFile+"\nexec /bin/sleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := findBinary(ctx, nil, func(context.Context, string) error { return errors.New("must not build") })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("findBinary() error = %v; want the context's deadline", err)
	}
	// Returned with the version question ended, not left running: the
	// asked binary is killed and reaped by then.
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the binary was not asked its version: %v", err)
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err != nil || !gone(pid) {
		t.Errorf("the binary asked its version (pid %q) still runs after findBinary returned", data)
	}
}

// fakeBuild writes an executable to out and counts its calls.
func fakeBuild(calls *atomic.Int32) buildFunc {
	return func(ctx context.Context, out string) error {
		calls.Add(1)
		return os.WriteFile(out, []byte("#!/bin/sh\n"), 0o755)
	}
}

func TestEnsureBuiltAlreadyPresent(t *testing.T) {
	bin := fakeBinary(t, "exit 0")
	var calls atomic.Int32
	got, err := ensureBuilt(context.Background(), bin, nil, fakeBuild(&calls))
	if err != nil || got != bin {
		t.Fatalf("ensureBuilt() = %q, %v; want %q", got, err, bin)
	}
	if calls.Load() != 0 {
		t.Errorf("build ran %d times for a binary that exists", calls.Load())
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(bin), "build.lock")); err == nil {
		t.Errorf("the fast path took the lock; it should only stat the binary")
	}
}

func TestEnsureBuiltBuildsOnceForConcurrentCallers(t *testing.T) {
	// flock locks belong to open file descriptions, so goroutines that each open the lock
	// file exclude each other exactly like separate processes do.
	bin := filepath.Join(t.TempDir(), "cache", "temporal")
	var calls atomic.Int32
	var progress syncBuffer
	// The build lasts until another caller says it waits for it, so that
	// the lock is seen held whatever the goroutines' pace.
	build := func(ctx context.Context, out string) error {
		calls.Add(1)
		for deadline := time.Now().Add(time.Minute); !strings.Contains(progress.String(), "another process is building"); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) { // a hang: not from this goroutine's t.Fatal
				return errors.New("no other caller waited for the build")
			}
		}
		return os.WriteFile(out, []byte("#!/bin/sh\n"), 0o755)
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			var got string
			got, errs[i] = ensureBuilt(context.Background(), bin, &progress, build)
			if errs[i] == nil && got != bin {
				errs[i] = errors.New("wrong path " + got)
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("caller %d: %v", i, err)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("build ran %d times, want 1", n)
	}
	if err := checkExecutable(bin); err != nil {
		t.Errorf("the binary is not in place: %v", err)
	}
	out := progress.String()
	for _, want := range []string{"todoflow: building the Temporal dev server (first run only, about 7 minutes on 2 cores) into " + bin,
		"another process is building"} {
		if !strings.Contains(out, want) {
			t.Errorf("progress lacks %q:\n%s", want, out)
		}
	}
	leftovers, _ := filepath.Glob(bin + ".tmp.*")
	if len(leftovers) > 0 {
		t.Errorf("temporary files left behind: %v", leftovers)
	}
}

// holdLock takes the build lock the way another process would and returns its release.
func holdLock(t *testing.T, bin string) func() {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(filepath.Dir(bin), "build.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release := func() { once.Do(func() { f.Close() }) }
	t.Cleanup(release)
	return release
}

func TestEnsureBuiltUsesWhatTheLockHolderBuilt(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "temporal")
	release := holdLock(t, bin)
	var calls atomic.Int32
	var progress syncBuffer
	type result struct {
		path string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		p, err := ensureBuilt(context.Background(), bin, &progress, fakeBuild(&calls))
		done <- result{p, err}
	}()
	// Once the caller says it waits for the lock (not before: it would find
	// the binary built and never wait), the "other process" finishes its
	// build, then lets go of the lock.
	waitForLine(t, &progress, "another process is building the Temporal dev server")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	release()
	r := <-done
	if r.err != nil || r.path != bin {
		t.Fatalf("ensureBuilt() = %q, %v; want %q", r.path, r.err, bin)
	}
	if calls.Load() != 0 {
		t.Errorf("built again after another process had built it")
	}
}

func TestEnsureBuiltHonoursContextWhileWaiting(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "temporal")
	holdLock(t, bin)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var calls atomic.Int32
	_, err := ensureBuilt(ctx, bin, nil, fakeBuild(&calls))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("ensureBuilt() error = %v; want a deadline error", err)
	}
}

func TestEnsureBuiltFailureLeavesNothing(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "temporal")
	boom := errors.New("compile error")
	_, err := ensureBuilt(context.Background(), bin, nil, func(ctx context.Context, out string) error {
		_ = os.WriteFile(out, []byte("half"), 0o755)
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("ensureBuilt() error = %v; want %v", err, boom)
	}
	if _, err := os.Stat(bin); err == nil {
		t.Errorf("a failed build left a binary")
	}
	if leftovers, _ := filepath.Glob(bin + ".tmp.*"); len(leftovers) > 0 {
		t.Errorf("a failed build left %v", leftovers)
	}
}

// syncBuffer is a strings.Builder safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
