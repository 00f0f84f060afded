package mcp

import (
	"os"
	"runtime"
	"strings"
)

// childEnv is the environment of a stdio server: the few variables a program
// needs to run (where it is, who runs it, how to find commands), then the
// server's own env entries (already expanded). The rest of the worker's
// environment stays with the worker: it holds the model's API key, the
// payload key and the credentials of other servers, and a server run from a
// package registry has no claim to them. This is the rule other MCP clients
// follow (the reference SDKs' default environment); a server that needs more
// names it in env, for example "GITHUB_TOKEN": "${GITHUB_TOKEN}".
func childEnv(own []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if inherited(name) {
			env = append(env, kv)
		}
	}
	return append(env, own...)
}

// inherited reports whether a stdio server gets the worker's variable name.
func inherited(name string) bool {
	if runtime.GOOS == "windows" {
		switch strings.ToUpper(name) {
		case "APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT", "PROCESSOR_ARCHITECTURE",
			"PROGRAMFILES", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "TMP", "USERNAME", "USERPROFILE", "COMSPEC", "WINDIR":
			return true
		}
		return false
	}
	switch name {
	case "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "TMPDIR", "TZ", "LANG":
		return true
	}
	// The locale decides how a server reads and writes text.
	return strings.HasPrefix(name, "LC_")
}
