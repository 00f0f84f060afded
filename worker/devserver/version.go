package devserver

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/todoflow/todoflow/internal/text"
)

// MinServerVersion is the Temporal Server that CLI [CLIVersion] embeds. A development
// build of the CLI (which reports no release version of its own) is judged by its server.
const MinServerVersion = "1.29.1"

// cliVersion is what `temporal --version` reports, e.g.
// "temporal version 1.5.1 (Server 1.29.1, UI 2.42.1)".
type cliVersion struct {
	CLI    string // "1.5.1", or "0.0.0-DEV" for a build from source
	Server string // "1.29.1"; "" when not reported
}

func (v cliVersion) String() string {
	if v.Server == "" {
		return "CLI " + v.CLI
	}
	return fmt.Sprintf("CLI %s, Server %s", v.CLI, v.Server)
}

var (
	cliVersionRE    = regexp.MustCompile(`temporal version v?(\S+)`)
	serverVersionRE = regexp.MustCompile(`[Ss]erver v?(\d+\.\d+\.\d+)`)
)

// parseVersion reads the output of `temporal --version`.
func parseVersion(out string) (cliVersion, error) {
	m := cliVersionRE.FindStringSubmatch(out)
	if m == nil {
		return cliVersion{}, fmt.Errorf("cannot tell its version from %q", outputLine(out))
	}
	v := cliVersion{CLI: m[1]}
	if m := serverVersionRE.FindStringSubmatch(out); m != nil {
		v.Server = m[1]
	}
	return v, nil
}

// checkSupported says why the dev server of a CLI of version v cannot serve todoflow, or
// returns nil. Every 1.x release from [CLIVersion] on is accepted (the flags flagArgs uses
// are stable across 1.x); a development build when its server is at least [MinServerVersion].
func checkSupported(v cliVersion) error {
	minCLI := strings.TrimPrefix(CLIVersion, "v")
	if strings.HasSuffix(v.CLI, "-DEV") || strings.HasPrefix(v.CLI, "0.0.0") {
		switch {
		case v.Server == "":
			return fmt.Errorf("a development build (%s) that does not report its server version", v.CLI)
		case compareVersions(v.Server, MinServerVersion) < 0:
			return fmt.Errorf("a development build with Server %s, older than %s", v.Server, MinServerVersion)
		}
		return nil
	}
	nums, ok := semver(v.CLI)
	switch {
	case !ok:
		return fmt.Errorf("version %q is not a release version", v.CLI)
	case nums[0] >= 2:
		return fmt.Errorf("version %s is a major release todoflow was not tested with (it runs 1.x from %s on)", v.CLI, minCLI)
	case compareVersions(v.CLI, minCLI) < 0:
		return fmt.Errorf("version %s is older than %s", v.CLI, minCLI)
	}
	return nil
}

// readVersion runs `bin --version`, for at most 10 s: a binary that hangs is not worth waiting for.
func readVersion(ctx context.Context, bin string) (cliVersion, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	cmd.WaitDelay = time.Second // a child that keeps the pipe open must not hold us
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return cliVersion{}, fmt.Errorf("`%s --version` did not answer within 10s", bin)
	case errors.As(err, &exit):
		return cliVersion{}, fmt.Errorf("`--version` failed (%v): %s", err, outputLine(string(out)))
	case err != nil:
		return cliVersion{}, fmt.Errorf("running it: %w", err)
	}
	return parseVersion(string(out))
}

// semver reads "MAJOR.MINOR.PATCH", ignoring a pre-release or build suffix.
func semver(s string) ([]int, bool) {
	if i := strings.IndexAny(s, "-+"); i >= 0 {
		s = s[:i]
	}
	parts := strings.Split(s, ".")
	nums := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || len(parts) != 3 {
			return nil, false
		}
		nums[i] = n
	}
	return nums, true
}

// compareVersions compares versions a and b as numbers; an unreadable a counts as older.
func compareVersions(a, b string) int {
	x, ok := semver(a)
	if !ok {
		return -1
	}
	y, _ := semver(b)
	return slices.Compare(x, y)
}

// outputLine is the line of a command's output an error quotes.
func outputLine(s string) string {
	if line := text.FirstLineAfterTrim(s); line != "" {
		return line
	}
	return "(no output)"
}
