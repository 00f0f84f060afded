package mcp

import (
	"fmt"
	"strings"
)

// expand replaces the references ${NAME} and ${NAME:-default} in s with
// values from lookup (os.LookupEnv). ${NAME:-default} gives default when NAME
// is unset or empty; ${NAME} of an unset variable is an error naming it. A
// '$' not followed by '{' is kept as it is, so that text such as "$5" or a
// password with a '$' needs no escaping; "$${" keeps a literal "${".
func expand(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		if i > 0 && s[i-1] == '$' { // "$${": a literal "${"
			b.WriteString(s[:i])
			b.WriteString("{")
			s = s[i+2:]
			continue
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", fmt.Errorf("%q: unterminated ${ (write $${ for a literal one)", s[i:])
		}
		ref := s[i+2 : i+end]
		name, def, hasDef := strings.Cut(ref, ":-")
		if !validVarName(name) {
			return "", fmt.Errorf("${%s}: %q is not a variable name", ref, name)
		}
		v, ok := lookup(name)
		switch {
		case hasDef && v == "":
			v = def
		case !ok:
			return "", fmt.Errorf("${%s}: %s is not set in the worker's environment", name, name)
		}
		b.WriteString(v)
		s = s[i+end+1:]
	}
}

// validVarName reports whether name is a portable environment variable name.
func validVarName(name string) bool {
	if name == "" {
		return false
	}
	for i, c := range name {
		if c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || i > 0 && '0' <= c && c <= '9' {
			continue
		}
		return false
	}
	return true
}
