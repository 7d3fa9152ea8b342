package sandbox

import (
	"path/filepath"
	"strings"

	"github.com/fence-sandbox/fence/policy/inputs"
)

// gitEntry is one variable of a git config file: its full name in lower
// case except the subsection ("core.hookspath", "filter.lfs.clean",
// "includeif.gitdir:~/w/.path"), its value, and the file it was read from.
type gitEntry struct {
	key, value, file string
}

// maxGitIncludes bounds include and includeIf chains, as git's own limit.
const maxGitIncludes = 10

// readGitConfig reads a git config file and every file it includes
// (include.path and includeIf.*.path, whatever their condition: a
// condition can come true later). includes collects the included files,
// existing or not; home expands "~/".
func readGitConfig(file, home string, depth int, includes *[]string) []gitEntry {
	b, err := inputs.ReadFile(file)
	if err != nil || depth > maxGitIncludes || len(b) > 1<<20 {
		return nil
	}
	var out []gitEntry
	for _, e := range parseGitConfig(string(b)) {
		e.file = file
		out = append(out, e)
		if e.key == "include.path" || strings.HasPrefix(e.key, "includeif.") && strings.HasSuffix(e.key, ".path") {
			inc := gitPath(e.value, filepath.Dir(file), home)
			*includes = append(*includes, inc)
			out = append(out, readGitConfig(inc, home, depth+1, includes)...)
		}
	}
	return out
}

// gitPath resolves a path-valued variable as git does: "~/" is the home,
// a relative path is taken from base.
func gitPath(v, base, home string) string {
	switch {
	case strings.HasPrefix(v, "~/"):
		return filepath.Join(home, v[2:])
	case filepath.IsAbs(v):
		return filepath.Clean(v)
	}
	return filepath.Join(base, v)
}

// parseGitConfig reads the variables of git config text: sections
// ([core], [remote "origin"], the old [branch.main]), variables with and
// without values, quotes and escapes, comments and continued lines.
func parseGitConfig(text string) []gitEntry {
	var out []gitEntry
	section := ""
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if strings.HasPrefix(line, "[") {
			var rest string
			section, rest = parseGitSection(line)
			line = strings.TrimSpace(rest) // a variable may follow on the same line
		}
		if line == "" || line[0] == '#' || line[0] == ';' || section == "" {
			continue
		}
		name, raw, hasValue := strings.Cut(line, "=")
		name = strings.ToLower(strings.TrimSpace(name))
		if !hasValue {
			out = append(out, gitEntry{key: section + "." + name, value: "true"})
			continue
		}
		for strings.HasSuffix(raw, `\`) && !strings.HasSuffix(raw, `\\`) && i+1 < len(lines) {
			i++
			raw = raw[:len(raw)-1] + lines[i]
		}
		out = append(out, gitEntry{key: section + "." + name, value: gitValue(raw)})
	}
	return out
}

// parseGitSection returns the section name of a header line and what
// follows the closing bracket.
func parseGitSection(line string) (string, string) {
	end := strings.LastIndex(line, "]")
	if end < 0 {
		return "", ""
	}
	head := line[1:end]
	name, sub, quoted := strings.Cut(head, `"`)
	if !quoted {
		return strings.ToLower(strings.TrimSpace(head)), line[end+1:]
	}
	sub = strings.TrimSuffix(sub, `"`)
	sub = strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(sub)
	return strings.ToLower(strings.TrimSpace(name)) + "." + sub, line[end+1:]
}

// gitValue decodes a raw value: quotes removed, escapes taken, an
// unquoted comment dropped, surrounding space trimmed.
func gitValue(raw string) string {
	var b strings.Builder
	inQuote := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == '"':
			inQuote = !inQuote
		case c == '\\' && i+1 < len(raw):
			i++
			switch raw[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'b':
			default:
				b.WriteByte(raw[i])
			}
		case (c == '#' || c == ';') && !inQuote:
			return strings.TrimSpace(b.String())
		default:
			b.WriteByte(c)
		}
	}
	return strings.TrimSpace(b.String())
}

// gitPathVars name a file or directory git reads or runs from.
var gitPathVars = map[string]bool{"core.hookspath": true, "core.attributesfile": true, "core.excludesfile": true}

// gitCommandVars name a command git runs; a word of one that holds a "/"
// is a program or script git would run from the disk.
func gitCommandVar(key string) bool {
	switch key {
	case "core.fsmonitor", "core.sshcommand", "core.pager", "core.editor", "core.askpass", "core.gitproxy",
		"sequence.editor", "diff.external", "gpg.program", "interactive.difffilter", "uploadpack.packobjectshook":
		return true
	}
	section, _, _ := strings.Cut(key, ".")
	name := key[strings.LastIndex(key, ".")+1:]
	switch section {
	case "alias", "pager":
		return true
	case "filter":
		return name == "clean" || name == "smudge" || name == "process"
	case "diff":
		return name == "textconv" || name == "command"
	case "merge":
		return name == "driver"
	case "credential":
		return name == "helper"
	case "gpg":
		return name == "program"
	case "difftool", "mergetool":
		return name == "cmd" || name == "path"
	}
	return false
}

// gitNamed returns the paths that entries make git read or run, with the
// variable and file that name each: relative ones are taken from base
// (the work tree, where git runs hooks, filters and aliases).
func gitNamed(entries []gitEntry, base, home string) []policyNamed {
	var out []policyNamed
	for _, e := range entries {
		by := e.key + " in " + e.file
		switch {
		case gitPathVars[e.key]:
			p := gitPath(e.value, base, home)
			out = append(out, policyNamed{p, by})
			if e.key == "core.hookspath" && filepath.Base(p) == "_" {
				// husky keeps its dispatcher in .husky/_, which runs
				// the hooks people write, one level up.
				out = append(out, policyNamed{filepath.Dir(p), by + " (husky runs the hooks above it)"})
			}
		case e.key == "core.fsmonitor" && (e.value == "true" || e.value == "false"):
		case gitCommandVar(e.key):
			for _, w := range strings.Fields(strings.TrimPrefix(e.value, "!")) {
				w = strings.Trim(w, `"'`)
				if _, v, ok := strings.Cut(w, "="); ok && strings.HasPrefix(w, "-") {
					w = v
				}
				if strings.Contains(w, "/") && !strings.Contains(w, "://") && !strings.ContainsAny(w, "$`") {
					out = append(out, policyNamed{gitPath(w, base, home), by})
				}
			}
		}
	}
	return out
}

type policyNamed struct{ path, by string }
