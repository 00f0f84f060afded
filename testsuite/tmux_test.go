package testsuite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tmux drives a terminal program the way a user does: a tmux server of the
// test's own (its own socket, so that no one else's sessions are touched),
// send-keys to type, capture-pane to read the screen.
type tmux struct {
	t      *testing.T
	socket string
	conf   string
	dir    string // where the panes' exit statuses are written
}

// newTmux starts nothing yet: the server starts with the first session. It
// skips the test, saying why, where tmux is missing (.ci/run installs it).
func newTmux(t *testing.T) *tmux {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: this end-to-end test of the terminal client needs it (apt-get install tmux; .ci/run installs it)")
	}
	conf := filepath.Join(t.TempDir(), "tmux.conf")
	// A pane keeps its screen after its program exits, so that the test can
	// read what the program printed last.
	if err := os.WriteFile(conf, []byte("set -g remain-on-exit on\nset -g history-limit 10000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := &tmux{t: t, socket: fmt.Sprintf("todoflow-test-%d-%d", os.Getpid(), time.Now().UnixNano())}
	m.conf, m.dir = conf, filepath.Dir(conf)
	t.Cleanup(func() { _, _ = m.run("kill-server") })
	return m
}

func (m *tmux) run(args ...string) (string, error) {
	args = append([]string{"-L", m.socket, "-f", m.conf}, args...)
	out, err := exec.Command("tmux", args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("tmux %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

func (m *tmux) must(args ...string) string {
	m.t.Helper()
	out, err := m.run(args...)
	if err != nil {
		m.t.Fatal(err)
	}
	return out
}

// start runs argv in a new 120×50 session named name, with env added to the
// test's environment.
func (m *tmux) start(name string, env []string, argv ...string) {
	m.t.Helper()
	// The pane's shell writes how argv ended to a file (see ended).
	cmd := []string{"sh", "-c", exitScript, m.statusFile(name), "env"}
	cmd = append(cmd, env...)
	cmd = append(cmd, argv...)
	quoted := make([]string, len(cmd))
	for i, a := range cmd {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	m.must("new-session", "-d", "-s", name, "-x", "120", "-y", "50", strings.Join(quoted, " "))
}

// keys types into session name (tmux key names: "Enter", "C-t").
func (m *tmux) keys(name string, keys ...string) {
	m.t.Helper()
	m.must(append([]string{"send-keys", "-t", name}, keys...)...)
}

// screen is what session name shows, with its scrollback.
func (m *tmux) screen(name string) string {
	m.t.Helper()
	return m.must("capture-pane", "-p", "-J", "-S", "-", "-t", name)
}

// visible is the visible part of the screen only.
func (m *tmux) visible(name string) string {
	m.t.Helper()
	return m.must("capture-pane", "-p", "-J", "-t", name)
}

// pid is the process id of the program in session name's pane: below the
// shells that run it (the pane's, and start's), which have exitScript on
// their command line.
func (m *tmux) pid(name string) int {
	m.t.Helper()
	var pid int
	if _, err := fmt.Sscan(m.must("display-message", "-p", "-t", name, "#{pane_pid}"), &pid); err != nil {
		m.t.Fatalf("pane pid: %v", err)
	}
	for {
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			m.t.Fatalf("the program of pane %s: %v", name, err)
		}
		if !strings.Contains(string(cmdline), exitScript) {
			return pid
		}
		children, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		if err != nil {
			m.t.Fatalf("the program of pane %s: %v", name, err)
		}
		if f := strings.Fields(string(children)); len(f) != 1 {
			m.t.Fatalf("the shell %d of pane %s has children %q, want one", pid, name, f)
		} else if _, err := fmt.Sscan(f[0], &pid); err != nil {
			m.t.Fatal(err)
		}
	}
}

// ended is how the program in session name's pane ended ("status 0"), or
// "" while it runs. It is read from the file start has the pane's shell
// write, not from tmux: tmux may draw a pane dead before its last bytes,
// and may leave its program a zombie it never reaps, so that neither a
// line printed last nor pane_dead_status can be relied on.
func (m *tmux) ended(name string) string {
	m.t.Helper()
	b, err := os.ReadFile(m.statusFile(name))
	if errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	if err != nil {
		m.t.Fatal(err)
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		return "" // being written
	}
	return "status " + strings.TrimSpace(string(b))
}

// exitScript runs its arguments and writes their exit status to the file
// named by $0.
const exitScript = `"$@"; echo $? >"$0"`

func (m *tmux) statusFile(name string) string { return filepath.Join(m.dir, name+".status") }

// waitExit waits until the program in session name's pane ends, and fails
// the test with the screen when it does not within limit or ends otherwise
// than with status 0.
func (m *tmux) waitExit(name string, limit time.Duration) {
	m.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		switch how := m.ended(name); how {
		case "status 0":
			return
		case "":
			if time.Now().After(deadline) {
				m.t.Fatalf("%s still runs after %v; the screen:\n%s", name, limit, m.screen(name))
			}
			time.Sleep(100 * time.Millisecond)
		default:
			m.t.Fatalf("%s ended with %s, want status 0; the screen:\n%s", name, how, m.screen(name))
		}
	}
}

// waitScreen polls the screen until cond holds, and fails the test with the
// screen when it does not within limit. A loaded machine may be slow, so
// limits are generous; polling ends as soon as cond holds.
func (m *tmux) waitScreen(name string, limit time.Duration, what string, cond func(screen string) bool) string {
	m.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		s := m.screen(name)
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("timed out after %v waiting for %s; the screen:\n%s", limit, what, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (m *tmux) waitFor(name string, limit time.Duration, texts ...string) string {
	m.t.Helper()
	return m.waitScreen(name, limit, fmt.Sprintf("%q", texts), func(s string) bool {
		for _, t := range texts {
			if !strings.Contains(s, t) {
				return false
			}
		}
		return true
	})
}
