package cliflags

import (
	"slices"
	"testing"

	"github.com/spf13/pflag"
)

func TestLongFlags(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.Bool("json", false, "")
	fs.StringP("output", "o", "", "")
	fs.String("task-queue", "", "")
	tests := []struct{ in, want []string }{
		{[]string{"-json", "-task-queue=q", "ID"}, []string{"--json", "--task-queue=q", "ID"}},
		{[]string{"-task-queue", "-json"}, []string{"--task-queue", "-json"}}, // a value stays as it is
		{[]string{"-o", "json", "-ojson", "--output", "-json"}, []string{"-o", "json", "-ojson", "--output", "-json"}},
		{[]string{"-bogus", "--", "-json"}, []string{"-bogus", "--", "-json"}}, // unknown, and after "--"
	}
	for _, tt := range tests {
		if got := LongFlags(fs, tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("LongFlags(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}
