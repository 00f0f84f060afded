package devserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestFlagArgs(t *testing.T) {
	common := []string{
		"--dynamic-config-value", "history.transferProcessorMaxPollRPS=1000",
		"--dynamic-config-value", "matching.numTaskqueueReadPartitions=1",
		"--dynamic-config-value", "matching.numTaskqueueWritePartitions=1",
		"--dynamic-config-value", "system.enableActivityEagerExecution=true",
		"--sqlite-pragma", "journal_mode=wal",
		"--sqlite-pragma", "synchronous=normal",
	}
	tests := []struct {
		name string
		in   Options
		want []string
	}{
		{
			name: "UI on, attributes sorted and respelled",
			in: Options{Port: 7233, UIPort: 8233, DBFile: "/s/t.db", Namespace: "default",
				SearchAttributes: map[string]string{"TodoTotal": "int", "TodoCurrent": "Keyword", "A": "keywordlist"}},
			want: slices.Concat([]string{"server", "start-dev", "--ip", "127.0.0.1", "--port", "7233", "--ui-port", "8233",
				"--metrics-port", "4321", "--db-filename", "/s/t.db", "--namespace", "default", "--log-level", "warn",
				"--search-attribute", "A=KeywordList",
				"--search-attribute", "TodoCurrent=Keyword",
				"--search-attribute", "TodoTotal=Int",
			}, common),
		},
		{
			name: "headless, no attributes",
			in:   Options{Port: 1234, UIPort: -1, DBFile: "/x.db", Namespace: "ns", DynamicConfig: []string{"a.b=2"}},
			want: slices.Concat([]string{"server", "start-dev", "--ip", "127.0.0.1", "--port", "1234", "--headless",
				"--metrics-port", "4321", "--db-filename", "/x.db", "--namespace", "ns", "--log-level", "warn",
			}, common[:8], []string{"--dynamic-config-value", "a.b=2"}, common[8:]),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := flagArgs(tt.in, 4321)
			if !slices.Equal(got, tt.want) {
				t.Errorf("flagArgs() =\n  %q\nwant\n  %q", got, tt.want)
			}
		})
	}
}

func TestFlagArgsDeterministic(t *testing.T) {
	attrs := map[string]string{}
	for i := range 20 {
		attrs[fmt.Sprintf("A%02d", i)] = "Keyword"
	}
	first := flagArgs(Options{SearchAttributes: attrs}, 1)
	for range 10 {
		if got := flagArgs(Options{SearchAttributes: attrs}, 1); !slices.Equal(got, first) {
			t.Fatalf("flagArgs changed between calls:\n%q\n%q", first, got)
		}
	}
}

func TestStartRejectsBadInputEarly(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	taken := ln.Addr().(*net.TCPAddr).Port
	// A binary that would leave a marker if it ran at all: these must fail before spawning.
	marker := t.TempDir() + "/ran"
	bin := fakeBinary(t, "touch "+marker)

	tests := []struct {
		name   string
		opts   Options
		want   string
		wantIs error
	}{
		{"unknown type", Options{Binary: bin, SearchAttributes: map[string]string{"X": "Integer"}}, `search attribute "X": unknown search attribute type "Integer"`, nil},
		{"gRPC port taken", Options{Binary: bin, Port: taken}, "127.0.0.1:" + strconv.Itoa(taken), ErrPortInUse},
		{"UI port taken", Options{Binary: bin, UIPort: taken}, "127.0.0.1:" + strconv.Itoa(taken), ErrPortInUse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Start(context.Background(), tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Start() error = %v; want one containing %q", err, tt.want)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("Start() error = %v; want errors.Is %v", err, tt.wantIs)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("the server binary ran")
			}
		})
	}
}

func TestStartFailsFastWhenTheServerExits(t *testing.T) {
	tests := []struct {
		name   string
		script string
		want   []string
		wantIs error
	}{
		{
			name:   "crash",
			script: `echo "starting up"; echo "fatal: database is corrupt" >&2; exit 3`,
			want:   []string{"exited during startup", "exit status 3", "starting up", "fatal: database is corrupt", "server start-dev --ip 127.0.0.1"},
		},
		{
			// The CLI's own ports for the services inside the server are not checked
			// before use: the listener's error is logged, and a nil listener panics later,
			// its stack pushing the log line out of the tail.
			name: "internal port taken, then a panic",
			script: `echo 'time=t level=ERROR msg="Failed to start gRPC listener" error="listen tcp 127.0.0.1:41000: bind: address already in use"' >&2
echo "panic: runtime error: invalid memory address or nil pointer dereference" >&2
i=0; while [ $i -lt 80 ]; do echo "	frame $i" >&2; i=$((i+1)); done; exit 2`,
			want:   []string{"Failed to start gRPC listener", "panic: runtime error", "frame 79", "exit status 2"},
			wantIs: ErrPortInUse,
		},
		{
			name:   "port taken under us",
			script: `echo "Error: can't set frontend port 7233: listen tcp 127.0.0.1:7233: bind: address already in use" >&2; exit 1`,
			want:   []string{"address already in use"},
			wantIs: ErrPortInUse,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Start(context.Background(), Options{Binary: fakeBinary(t, tt.script), UIPort: -1})
			if err == nil {
				t.Fatal("Start() succeeded with a server that exits")
			}
			// Noticed by the exit, not by the ready timeout (a minute),
			// which would end with another error.
			for _, w := range append([]string{"exited during startup"}, tt.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Start() error lacks %q:\n%v", w, err)
				}
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("Start() error = %v; want errors.Is %v", err, tt.wantIs)
			}
		})
	}
}

// runProcess starts script as a Server process without waiting for health, the way
// startOnce does, for tests of the process handling alone.
func runProcess(t *testing.T, script string) *Server {
	t.Helper()
	s := &Server{
		cmd:  exec.Command("/bin/sh", "-c", script),
		log:  newTail(tailLines),
		done: make(chan struct{}),
	}
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	s.cmd.SysProcAttr = procAttr()
	if err := s.run(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

// gone reports whether pid has exited. A zombie counts as gone: it has exited, and an
// orphan waits for init to reap it, which a container's init may never do.
func gone(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	// The state follows the parenthesised command name: "pid (comm) S ...".
	i := strings.LastIndexByte(string(stat), ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

func TestStopTerminatesTheProcessGroup(t *testing.T) {
	// The shell's child sleeps in the same process group; Stop must take both down.
	s := runProcess(t, `sleep 300 & echo $!; wait`)
	child := waitForPID(t, s)
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop() = %v", err)
	}
	if !gone(s.cmd.Process.Pid) {
		t.Errorf("the server process %d is still there", s.cmd.Process.Pid)
	}
	waitGone(t, child)
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop() = %v; want nil", err)
	}
}

func TestStopKillsWhatIgnoresSIGTERM(t *testing.T) {
	old := stopGrace
	stopGrace = 300 * time.Millisecond
	t.Cleanup(func() { stopGrace = old })
	s := runProcess(t, `trap "" TERM; echo ready; while :; do sleep 1; done`)
	waitForLine(t, s.log, "ready")
	start := time.Now()
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop() = %v", err)
	}
	if !gone(s.cmd.Process.Pid) {
		t.Errorf("the process survived Stop")
	}
	if d := time.Since(start); d < stopGrace {
		t.Errorf("Stop took %s: it did not give SIGTERM its grace period", d)
	}
	if !strings.Contains(s.log.String(), "ignored SIGTERM") {
		t.Errorf("no note about the SIGKILL in the log:\n%s", s.log.String())
	}
}

// waitForLine waits until out has said want: a bound of a minute, which
// only a hang reaches.
func waitForLine(t *testing.T, out fmt.Stringer, want string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the output:\n%s", want, out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func waitForPID(t *testing.T, s *Server) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if pid, err := strconv.Atoi(strings.TrimSpace(s.log.String())); err == nil {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in the output:\n%s", s.log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitGone waits for pid to disappear; an orphan is reaped by init, which takes a moment.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !gone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d is still alive", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The server's process gets what a program needs to run and none of the
// worker's secrets, nor OpenTelemetry's variables, which the worker's and the
// starter's tracing use.
func TestServerEnv(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the list differs on Windows")
	}
	tests := []struct {
		kv   string
		kept bool
	}{
		{"PATH=/bin", true},
		{"HOME=/root", true},
		{"USER=todoflow", true},
		{"TMPDIR=/var/tmp", true},
		{"TZ=UTC", true},
		{"LANG=C.UTF-8", true},
		{"LC_ALL=C.UTF-8", true},
		{"XDG_CONFIG_HOME=/root/.config", true},
		{"GOMAXPROCS=2", true},
		{"GOMEMLIMIT=1GiB", true},

		{"OPENAI_API_KEY=sk-worker-only", false},
		{"TODOFLOW_PAYLOAD_KEY=payload-key", false},
		{"TODOFLOW_WEBHOOK_HEADERS_OPS={\"Authorization\": \"Bearer t\"}", false},
		{"TODOFLOW_WEBHOOK_URLS_OPS=https://hooks.example.com", false},
		{"BILLING_TOKEN=mcp-secret", false},
		{"TEMPORAL_API_KEY=cloud-key", false},
		{"AWS_SECRET_ACCESS_KEY=aws", false},
		{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318", false},
		{"OTEL_TRACES_EXPORTER=", false},
		{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf", false},
		{"MY_OTEL_X=1", false},
		{"LD_PRELOAD=/tmp/x.so", false},
	}
	var env, want []string
	for _, tt := range tests {
		env = append(env, tt.kv)
		if tt.kept {
			want = append(want, tt.kv)
		}
	}
	before := slices.Clone(env)
	if got := serverEnv(env); !slices.Equal(got, want) {
		t.Errorf("serverEnv = %q, want %q", got, want)
	}
	if !slices.Equal(env, before) {
		t.Errorf("serverEnv changed its argument: %q", env)
	}
}
