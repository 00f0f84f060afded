// Package docs holds the project's documentation by reader, and the tests
// that keep it a house a newcomer can walk: the README stays a front door,
// and every link between the documents leads somewhere.
package docs

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// maxReadmeLines is the front door's size (issue 38): what it is, the two
// commands, one picture, how it works, links. The rest goes to docs/.
const maxReadmeLines = 250

// root is the repository's root, from this package's folder.
const root = ".."

// documents are the files whose links are checked, from the root.
func documents(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "CONTRIBUTING.md", "SECURITY.md", "BENCHMARKS.md"}
	more, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(more) == 0 {
		t.Fatal("docs/ has no .md file")
	}
	for _, m := range more {
		rel, err := filepath.Rel(root, m)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, rel)
	}
	return files
}

func TestReadmeIsAFrontDoor(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > maxReadmeLines {
		t.Errorf("README.md has %d lines; keep it within %d and move the rest to a page of docs/ for its reader", n, maxReadmeLines)
	}
}

// link is a markdown link or image: [text](target) or ![alt](target).
var link = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)

// heading is an ATX heading: its level marks and its text.
var heading = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)

// prose returns a markdown file's lines that are not code: fenced blocks
// and indented blocks (four spaces after a blank line, or after another
// such line) are left out, so a link or heading shown as code is neither.
func prose(text string) []string {
	var out []string
	fenced, indented, blank := false, false, true
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "```"):
			fenced = !fenced
			blank = false
			continue
		case fenced:
			continue
		case strings.HasPrefix(line, "    ") && (blank || indented):
			indented = true
			continue
		}
		indented = trimmed == "" && indented
		blank = trimmed == ""
		out = append(out, line)
	}
	return out
}

// anchors returns the anchors GitHub makes of a file's headings: lower
// case, punctuation dropped, spaces as hyphens, a repeated one numbered.
func anchors(text string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, line := range prose(text) {
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(m[2]) {
			switch {
			case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

func TestLinksLeadSomewhere(t *testing.T) {
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{} // by path from the root, read once
	read := func(rel string) (string, error) {
		if s, ok := texts[rel]; ok {
			return s, nil
		}
		b, err := os.ReadFile(filepath.Join(root, rel))
		texts[rel] = string(b)
		return string(b), err
	}
	for _, doc := range documents(t) {
		text, err := read(doc)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range prose(text) {
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue // not a file of the repository
				}
				path, anchor, _ := strings.Cut(target, "#")
				rel := doc
				if path != "" {
					rel = filepath.Join(filepath.Dir(doc), path)
					full, err := filepath.Abs(filepath.Join(root, rel))
					if err != nil {
						t.Fatal(err)
					}
					if full != abs && !strings.HasPrefix(full, abs+string(filepath.Separator)) {
						t.Errorf("%s: %q leads out of the repository", doc, target)
						continue
					}
					if _, err := os.Stat(full); err != nil {
						t.Errorf("%s: %q: no such file or folder (%s)", doc, target, rel)
						continue
					}
				}
				if anchor == "" {
					continue
				}
				if !strings.HasSuffix(rel, ".md") {
					t.Errorf("%s: %q: an anchor into a file that is not markdown", doc, target)
					continue
				}
				to, err := read(rel)
				if err != nil {
					t.Errorf("%s: %q: %v", doc, target, err)
					continue
				}
				if !anchors(to)[anchor] {
					t.Errorf("%s (prose line %d): %q: %s has no heading with the anchor #%s", doc, i+1, target, rel, anchor)
				}
			}
		}
	}
}

// The anchor rules, on headings this repository has.
func TestAnchors(t *testing.T) {
	got := anchors("# A\n## Several workers: where a session's workspace lives\n## A long-lived server, the starter and the `temporal` CLI\n    ## not a heading\n## Notes\n## Notes\n")
	for _, want := range []string{"a", "several-workers-where-a-sessions-workspace-lives", "a-long-lived-server-the-starter-and-the-temporal-cli", "notes", "notes-1"} {
		if !got[want] {
			t.Errorf("no anchor %q in %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Errorf("an indented line made an anchor: %v", got)
	}
}
