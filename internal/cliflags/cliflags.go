// Package cliflags is what todoflow's two commands, starter and worker, share of their
// command lines, which cobra and its pflag flags parse: the single-dash long flags that
// Go's flag package took, and earlier versions of both commands with it.
package cliflags

import (
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// LongFlags rewrites the single-dash long flags of args ("-json", "-task-queue=q") that fs
// defines with two dashes; pflag would read them as a row of one-letter flags. Flag values
// and everything after "--" are left as they are.
func LongFlags(fs *pflag.FlagSet, args []string) []string {
	out := slices.Clone(args)
	for i := 0; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") || len(a) < 2 {
			continue
		}
		long := strings.HasPrefix(a, "--")
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		var f *pflag.Flag
		switch {
		case long:
			f = fs.Lookup(name)
		case len(name) > 1 && fs.Lookup(name) != nil:
			f = fs.Lookup(name)
			out[i] = "-" + a
		case len(name) == 1:
			f = fs.ShorthandLookup(name)
		}
		if f != nil && !hasValue && f.NoOptDefVal == "" {
			i++ // the flag's value, whatever it looks like
		}
	}
	return out
}
