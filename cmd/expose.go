package cmd

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/policy/inputs"
)

// exposeFlags are --expose-host-path and --expose-host-path-rw: host
// paths below /tmp bound into the sandbox's private /tmp, which hides the
// host's, read-only or writable.
type exposeFlags struct {
	ro, rw []string
}

func (e *exposeFlags) register(f *pflag.FlagSet) {
	f.StringArrayVar(&e.ro, "expose-host-path", nil, "bind the host's `PATH` (below /tmp) read-only into the sandbox's private /tmp (repeatable; every deny still wins)")
	f.StringArrayVar(&e.rw, "expose-host-path-rw", nil, "bind the host's `PATH` (below /tmp) writable into the sandbox's private /tmp (repeatable; every deny and protection still wins)")
}

// exposed is one host path the flags bind.
type exposed struct {
	flag, path string
	write      bool
}

// paths checks each flag's path: absolute (relative to the working
// directory), at or below /tmp, there, and reached through no symbolic
// link; a path a link leads through is refused rather than followed,
// since a link below the host's /tmp is anyone's to plant or swap.
func (e *exposeFlags) paths(dir string) ([]exposed, error) {
	if len(e.ro)+len(e.rw) > 0 && runtime.GOOS != "linux" {
		return nil, fmt.Errorf("--expose-host-path binds into the private /tmp of fence's Linux sandbox; on %s the sandbox sees the host's /tmp, where --allow-read and --allow-write give a path access", runtime.GOOS)
	}
	var out []exposed
	for _, l := range []struct {
		flag  string
		write bool
		paths []string
	}{{"--expose-host-path", false, e.ro}, {"--expose-host-path-rw", true, e.rw}} {
		for _, p := range l.paths {
			abs, err := checkExposed(l.flag, p, dir)
			if err != nil {
				return nil, err
			}
			out = append(out, exposed{flag: l.flag, path: abs, write: l.write})
		}
	}
	return out, nil
}

func checkExposed(flag, p, dir string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("%s: empty path", flag)
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(dir, p)
	}
	abs = filepath.Clean(abs)
	if abs != "/tmp" && !strings.HasPrefix(abs, "/tmp/") {
		return "", fmt.Errorf("%s %q: only a path below /tmp can be exposed: the sandbox's /tmp is its own and hides the host's, but every other host path is the host's already (readable unless a rule denies it; use --allow-write to make it writable)", flag, p)
	}
	if _, err := inputs.Lstat(abs); err != nil {
		return "", fmt.Errorf("%s %q: %w", flag, p, err)
	}
	real, err := inputs.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("%s %q: %w", flag, p, err)
	}
	if real != abs {
		return "", fmt.Errorf("%s %q: refused: the path is a symbolic link or lies below one (it leads to %q); fence binds no path a link chooses, since a link below /tmp is anyone's to plant: expose the path itself", flag, p, real)
	}
	if m := mountAt(abs, mountPoints()); m != "" {
		return "", fmt.Errorf("%s %q: refused: %s is a mount point, which may show another tree (a home, a repository) under a /tmp name, where the protections, which match paths, would not know it: expose a directory of /tmp's own", flag, p, m)
	}
	return abs, nil
}

// mountPoints are the mount points of fence's mount namespace
// (/proc/self/mountinfo's fifth field, its octal escapes read); none
// where the file cannot be read (macOS, which refuses the flags anyway).
func mountPoints() []string {
	data, err := inputs.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 4 {
			out = append(out, unescapeMount(f[4]))
		}
	}
	return out
}

// unescapeMount reads mountinfo's \NNN octal escapes (\040 for a space).
func unescapeMount(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mountAt is a mount point at abs, below it, or above it inside /tmp (a
// mount of /tmp itself aside): what makes an exposed path show a tree
// other than /tmp's; "" when there is none.
func mountAt(abs string, mounts []string) string {
	for _, m := range mounts {
		if m == "/tmp" {
			continue // /tmp's own filesystem
		}
		if m == abs || strings.HasPrefix(m, abs+"/") || strings.HasPrefix(abs, m+"/") && strings.HasPrefix(m, "/tmp/") {
			return m
		}
	}
	return ""
}

// expose adds the exposed paths to the compiled policy, as read or write
// rules of the command line, and refuses one a deny rule or a protection
// covers: a deny always wins, and a path exposed only to be masked again
// is a mistake worth naming.
func expose(pol *policy.Policy, paths []exposed) error {
	for _, e := range paths {
		r := policy.Rule{Pattern: e.path, Origin: "command line: " + e.flag, Key: "filesystem.allowRead", Text: e.path, Source: "command line"}
		if e.write {
			r.Key = "filesystem.allowWrite"
			pol.Write = append(pol.Write, r)
		} else {
			pol.Read = append(pol.Read, r)
		}
	}
	for _, e := range paths {
		access := "read"
		if e.write {
			access = "write"
		}
		if d := pol.CheckPath(access, e.path, e.path); !d.Allowed {
			return fmt.Errorf("%s %q: refused: %s", e.flag, e.path, denialText(pol, d))
		}
	}
	return nil
}

// denialText names the rule of a refused decision, with its pattern and
// where it was written.
func denialText(pol *policy.Policy, d policy.Decision) string {
	s := d.Rule
	if r := coveringRule(pol, d); r != nil {
		s += fmt.Sprintf(" %q (%s)", r.Pattern, r.Origin)
	}
	s += " covers it, and a deny always wins"
	if d.Suggestion != "" {
		s += ": " + d.Suggestion
	}
	return s
}

// coveringRule is the deny rule behind d, for its pattern and origin.
func coveringRule(pol *policy.Policy, d policy.Decision) *policy.Rule {
	for _, rules := range [][]policy.Rule{pol.DenyRead, pol.DenyWrite} {
		for i, r := range rules {
			if r.Key == d.Rule && policy.Covers(r.Pattern, d.Path, r.Fold) {
				return &rules[i]
			}
		}
	}
	return nil
}
