package devserver

import (
	"context"
	"strings"
	"testing"
)

func TestParseVersion(t *testing.T) {
	tests := []struct {
		out     string
		want    cliVersion
		wantErr string
	}{
		{"temporal version 1.5.1 (Server 1.29.1, UI 2.42.1)\n", cliVersion{"1.5.1", "1.29.1"}, ""},
		{"temporal version 0.0.0-DEV (Server 1.29.1, UI 2.42.1)", cliVersion{"0.0.0-DEV", "1.29.1"}, ""},
		// The pre-1.0 CLI's format.
		{"temporal version 0.13.2 (server 1.24.2) (ui 2.27.1)", cliVersion{"0.13.2", "1.24.2"}, ""},
		{"temporal version v1.6.0", cliVersion{"1.6.0", ""}, ""},
		{"Usage: temporal [command]\nmore", cliVersion{}, `"Usage: temporal [command]"`},
		{"", cliVersion{}, "(no output)"},
	}
	for _, tt := range tests {
		got, err := parseVersion(tt.out)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseVersion(%q) error = %v; want one saying %s", tt.out, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("parseVersion(%q) = %+v, %v; want %+v", tt.out, got, err, tt.want)
		}
	}
}

func TestCheckSupported(t *testing.T) {
	tests := []struct {
		v       cliVersion
		wantErr string // "" accepted
	}{
		{cliVersion{"1.5.1", "1.29.1"}, ""},
		{cliVersion{"1.5.2", ""}, ""},
		{cliVersion{"1.6.0", "1.30.0"}, ""},
		{cliVersion{"1.10.0", "1.31.0"}, ""}, // compared as numbers, not strings
		{cliVersion{"1.9.1-rc.1", ""}, ""},
		{cliVersion{"0.0.0-DEV", "1.29.1"}, ""},
		{cliVersion{"0.0.0-DEV", "1.30.2"}, ""},
		{cliVersion{"1.5.0", "1.29.0"}, "version 1.5.0 is older than 1.5.1"},
		{cliVersion{"1.1.2", "1.25.2"}, "older than 1.5.1"},
		{cliVersion{"0.13.2", "1.24.2"}, "older than 1.5.1"},
		{cliVersion{"2.0.0", ""}, "major release todoflow was not tested with"},
		{cliVersion{"0.0.0-DEV", "1.28.0"}, "Server 1.28.0, older than 1.29.1"},
		{cliVersion{"0.0.0-DEV", ""}, "does not report its server version"},
		{cliVersion{"latest", ""}, "not a release version"},
	}
	for _, tt := range tests {
		err := checkSupported(tt.v)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("checkSupported(%+v) = %v; want it accepted", tt.v, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("checkSupported(%+v) = %v; want an error saying %q", tt.v, err, tt.wantErr)
		}
	}
}

func TestReadVersion(t *testing.T) {
	tests := []struct {
		name    string
		script  string
		want    cliVersion
		wantErr string
	}{
		{"release", `echo "temporal version 1.5.1 (Server 1.29.1, UI 2.42.1)"`, cliVersion{"1.5.1", "1.29.1"}, ""},
		{"only --version answers", `[ "$1" = --version ] || exit 3; echo "temporal version 1.6.0 (Server 1.30.0, UI 2.45.0)"`, cliVersion{"1.6.0", "1.30.0"}, ""},
		{"fails", `echo "unknown flag: --version" >&2; exit 1`, cliVersion{}, "unknown flag: --version"},
		{"not a temporal CLI", `echo "hello"`, cliVersion{}, `cannot tell its version from "hello"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readVersion(context.Background(), fakeBinary(t, tt.script))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("readVersion() error = %v; want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("readVersion() = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}
