package localcluster

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fakeScript writes a cluster.sh that prints body's output for any command
// and exits with code; it echoes its arguments and its owner pid first.
func fakeScript(t *testing.T, body string, code int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cluster.sh")
	script := "#!/bin/sh\necho \"args: $*\"\necho \"owner: $TODOFLOW_CLUSTER_OWNER_PID $EXTRA\"\n" + body + "\nexit " + strconv.Itoa(code) + "\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestUp(t *testing.T) {
	for _, tc := range []struct {
		name     string
		body     string
		code     int
		wantAddr string
		wantErr  string
		unable   bool
	}{
		{"up", "echo 'cluster: up in 0m04s' >&2\necho TEMPORAL_ADDRESS=127.0.0.1:7233\necho", 0, "127.0.0.1:7233", "", false},
		{"no PostgreSQL", "echo 'cluster: PostgreSQL cannot be installed' >&2", 3, "", "no cluster on this machine: cluster: PostgreSQL cannot be installed", true},
		{"failed", "echo 'cluster: the server did not start' >&2", 1, "", "cluster.sh up: exit status 1: cluster: the server did not start", false},
		{"no address", "echo done", 0, "", `last line is "done"`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			c := &Cluster{Script: fakeScript(t, tc.body, tc.code), Dir: dir, Env: []string{"EXTRA=set"}}
			var lines []string
			err := c.Up(context.Background(), func(l string) { lines = append(lines, l) })
			if tc.wantErr == "" && err != nil {
				t.Fatalf("Up: %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("Up: %v, want an error with %q", err, tc.wantErr)
			}
			if got := errors.Is(err, ErrUnavailable); got != tc.unable {
				t.Errorf("errors.Is(err, ErrUnavailable) = %v, want %v", got, tc.unable)
			}
			if c.Address != tc.wantAddr {
				t.Errorf("Address = %q, want %q", c.Address, tc.wantAddr)
			}
			want := []string{"args: up " + dir, "owner: " + strconv.Itoa(os.Getpid()) + " set"}
			if len(lines) < 2 || lines[0] != want[0] || lines[1] != want[1] {
				t.Errorf("progress lines %q, want them to start with %q", lines, want)
			}
		})
	}
}

func TestPID(t *testing.T) {
	dir := t.TempDir()
	for file, content := range map[string]string{
		"run/history.pid":              "1234\n",
		"postgres/data/postmaster.pid": "5678\n/var/lib/data\n1700000000\n",
		"run/matching.pid":             "not a pid\n",
	} {
		path := filepath.Join(dir, file)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := &Cluster{Dir: dir}
	for _, tc := range []struct {
		service string
		want    int
		wantErr bool
	}{
		{"history", 1234, false},
		{"postgres", 5678, false},
		{"matching", 0, true},
		{"frontend", 0, true},
	} {
		got, err := c.PID(tc.service)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("PID(%q) = %d, %v; want %d, error %v", tc.service, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestSettings(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       map[string]string
		wantErr    string
	}{
		{"settings", "# by cluster.sh\nPG_PORT=20000\nOWNER_PID=\nDYNAMIC_CONFIG_FILE_PATH=/tmp/a=b/c\n",
			map[string]string{"PG_PORT": "20000", "OWNER_PID": "", "DYNAMIC_CONFIG_FILE_PATH": "/tmp/a=b/c"}, ""},
		{"not a setting", "PG_PORT=20000\ntouch /tmp/x\n", nil, "line 2: not NAME=VALUE"},
		{"no file", "", nil, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Cluster{Dir: t.TempDir()}
			if tc.file != "" {
				if err := os.WriteFile(filepath.Join(c.Dir, "cluster.env"), []byte(tc.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := c.Settings()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Settings() = %v, %v; want an error with %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || !maps.Equal(got, tc.want) {
				t.Fatalf("Settings() = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
