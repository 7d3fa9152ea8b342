package sandbox

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/policy/inputs"
)

// StandardBinDirs are searched for denied commands besides the PATH.
var StandardBinDirs = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}

// execDenies makes the executables of one-word deny rules (sudo, python2)
// non-executable in the sandbox, so that a child process cannot run them
// where preflight could not see it. A binary that also implements other
// commands (busybox, or systemctl behind reboot) is still blocked, with a
// warning naming the collateral, unless the policy accepts that it cannot
// be denied at run time.
func (b *builder) execDenies() {
	dirs := binDirs(b.plan.Env)
	var shared map[string][]string // target -> names, built when first needed
	for _, r := range b.pol.CommandDeny {
		if len(r.Tokens) != 1 || r.IsGlob(0) {
			continue
		}
		for _, target := range findExecutables(r.Tokens[0], dirs) {
			names := []string{r.Tokens[0]}
			if isShared(target, r.Tokens[0]) {
				if r.Builtin {
					// reboot is systemctl: the kernel stops what it would
					// do (no capabilities), and blocking systemctl would
					// cost more than it protects.
					continue
				}
				if shared == nil {
					shared = namesByTarget(dirs)
				}
				names = shared[target]
			}
			b.denyExec(r, target, names)
		}
		// Its other names: hard links, and copies, found by identity.
		for _, id := range b.plan.Programs {
			if id.Name != r.Tokens[0] {
				continue
			}
			for _, other := range append([]string{id.Path}, id.Other...) {
				b.denyExec(r, other, nil)
			}
		}
	}
}

// programs puts in the plan the denied programs by identity, for path
// masking and argv mode; a search the budget cut short fails the plan.
func (b *builder) programs() {
	t := programsFor(b.pol, binDirs(b.plan.Env))
	if t.err != nil && b.err == nil {
		b.err = t.err
	}
	// What the search kept of each program for itself stays out of the
	// plan, which holds data only.
	b.plan.Programs = make([]ProgramIdentity, len(t.list))
	for i, id := range t.list {
		id.aliases, id.keys, id.links = nil, nil, 0
		b.plan.Programs[i] = id
	}
}

func (b *builder) denyExec(r policy.CommandRule, target string, names []string) {
	why := fmt.Sprintf("command.deny %q, at run time", r.Text)
	if collateral := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == r.Tokens[0] }); len(collateral) > 0 {
		if slices.Contains(b.pol.SharedBinariesAccepted, filepath.Base(target)) {
			return // accepted: preflight alone blocks it
		}
		b.plan.Warnings = append(b.plan.Warnings, fmt.Sprintf("%s: %s is %s, which also runs %s; all of them are blocked (name it in command.acceptSharedBinaryCannotRuntimeDeny to block it at preflight only)",
			why, r.Tokens[0], target, strings.Join(collateral, ", ")))
	}
	if !slices.ContainsFunc(b.plan.Mounts.Masks, func(m Mask) bool { return m.Path == target }) {
		b.plan.Mounts.Masks = append(b.plan.Mounts.Masks, Mask{Path: target, Kind: KindProgram, Why: why})
	}
}

// binDirs are the command's PATH directories and the standard ones.
func binDirs(env []string) []string {
	var dirs []string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			dirs = filepath.SplitList(v)
		}
	}
	dirs = append(dirs, StandardBinDirs...)
	// Once each, after symlinks (/bin is often /usr/bin).
	seen := map[string]bool{}
	var out []string
	for _, d := range dirs {
		real, err := inputs.EvalSymlinks(d)
		if err != nil || !filepath.IsAbs(d) || seen[real] {
			continue
		}
		seen[real] = true
		out = append(out, real)
	}
	return out
}

// findExecutables returns the files name resolves to in dirs, after
// symlinks, without repeats.
func findExecutables(name string, dirs []string) []string {
	var out []string
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if _, err := inputs.Lstat(p); err != nil {
			continue // the common case: one system call
		}
		target, err := inputs.EvalSymlinks(p)
		if err != nil {
			continue
		}
		if fi, err := inputs.Stat(target); err == nil && fi.Mode().IsRegular() && !slices.Contains(out, target) {
			out = append(out, target)
		}
	}
	return out
}

// isShared reports whether the file behind name also answers to other
// names: its own name differs, or it has other hard links.
func isShared(target, name string) bool {
	if filepath.Base(target) != name {
		return true
	}
	fi, err := inputs.Stat(target)
	if err != nil {
		return false
	}
	return hardLinks(fi) > 1
}

// namesByTarget maps each file in dirs to the names it is reached by.
func namesByTarget(dirs []string) map[string][]string {
	out := map[string][]string{}
	for _, d := range dirs {
		entries, err := inputs.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range entries {
			target, err := inputs.EvalSymlinks(filepath.Join(d, e.Name()))
			if err == nil && !slices.Contains(out[target], e.Name()) {
				out[target] = append(out[target], e.Name())
			}
		}
	}
	for t, names := range out {
		slices.Sort(names)
		out[t] = names
	}
	return out
}
