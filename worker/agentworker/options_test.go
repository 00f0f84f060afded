package agentworker

import (
	"strings"
	"testing"

	"github.com/todoflow/todoflow/activities"
)

func TestToolOutputMax(t *testing.T) {
	tests := []struct {
		name    string
		opt     int
		env     string
		want    int
		wantErr string
	}{
		{name: "default", want: activities.DefaultToolOutputMax},
		{name: "from the environment", env: "4096", want: 4096},
		{name: "spaces around it", env: " 2048\n", want: 2048},
		{name: "the option wins", opt: 100000, env: "4096", want: 100000},
		{name: "the least", env: "1024", want: activities.MinToolOutputMax},
		{name: "the most", opt: 1 << 20, want: activities.MaxToolOutputMax},
		{name: "not a number", env: "64KiB",
			wantErr: `TODOFLOW_TOOL_OUTPUT_MAX="64KiB": want a number of bytes from 1024 to 1048576 (default 65536)`},
		{name: "too small in the environment", env: "100",
			wantErr: "TODOFLOW_TOOL_OUTPUT_MAX is 100: want a number of bytes from 1024 to 1048576"},
		{name: "too large an option", opt: 4 << 20,
			wantErr: "ToolOutputMax is 4194304: want a number of bytes from 1024 to 1048576"},
		{name: "negative option", opt: -1, wantErr: "ToolOutputMax is -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvToolOutputMax, tt.env)
			got, err := toolOutputMax(tt.opt)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("toolOutputMax(%d) with %q = %d, %v; want error %q", tt.opt, tt.env, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("toolOutputMax(%d) with %q = %d, %v; want %d", tt.opt, tt.env, got, err, tt.want)
			}
		})
	}
}
