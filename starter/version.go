package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/todoflow/todoflow/worker/devserver"
)

// formatVersion is what `starter --version` prints, from debug.ReadBuildInfo: the
// module's version as the build recorded it (a tag or pseudo-version for `go install
// …@version`, "(devel)" with the commit for a build in a checkout), the Temporal Go SDK's
// and the Temporal CLI's that the embedded server is built from.
func formatVersion(bi *debug.BuildInfo, ok bool) string {
	var b strings.Builder
	version := "(unknown: no build information)"
	if ok {
		version = bi.Main.Version
		if version == "" {
			version = "(devel)"
		}
		var vcs []string
		settings := map[string]string{}
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
		if r := settings["vcs.revision"]; r != "" {
			vcs = append(vcs, "commit "+r[:min(12, len(r))])
		}
		if t := settings["vcs.time"]; t != "" {
			vcs = append(vcs, t)
		}
		if settings["vcs.modified"] == "true" {
			vcs = append(vcs, "with local changes")
		}
		if len(vcs) > 0 {
			version += " (" + strings.Join(vcs, ", ") + ")"
		}
	}
	fmt.Fprintf(&b, "todoflow starter %s\n", version)
	fmt.Fprintf(&b, "Temporal Go SDK v%s\n", strings.TrimPrefix(temporal.SDKVersion, "v"))
	fmt.Fprintf(&b, "Temporal CLI %s for the embedded dev server (or a newer 1.x on PATH)\n", devserver.CLIVersion)
	return b.String()
}
