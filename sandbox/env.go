package sandbox

import (
	"fmt"
	"path"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/fence-sandbox/fence/policy"
	"github.com/fence-sandbox/fence/policy/inputs"
)

// LoaderRule names the rule that removes the dynamic loaders' variables
// (policy.LoaderEnvPatterns) whatever the policy says.
const LoaderRule = "fence (the loaders' variables LD_*, DYLD_*)"

// ShellStartupRule names the rule that removes BASH_ENV, which makes a
// non-interactive bash source a file before its -c string, whose commands
// the preflight never sees. env.allow does not lift it. (ENV is read by
// interactive shells only, and apps use the name for their own ends.)
const ShellStartupRule = "fence (the shells' startup variable BASH_ENV)"

// shellStartupVars are the variables of ShellStartupRule.
var shellStartupVars = []string{"BASH_ENV"}

// SanitizeEnv removes loader-injection variables and the policy's env.deny
// names (unless env.allow names them) and marks the sandbox. Patterns
// match names without regard to case. It returns the new environment and
// the names it removed, sorted.
func SanitizeEnv(environ, deny, allow []string) (env, removed []string) {
	m := newEnvMatcher(deny, allow)
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if name == "FENCE_SANDBOX" {
			continue
		}
		if _, drop := m.removal(name); drop {
			removed = append(removed, name)
			continue
		}
		env = append(env, kv)
	}
	slices.Sort(removed)
	return append(env, "FENCE_SANDBOX=1"), slices.Compact(removed)
}

// EnvRemoval says whether SanitizeEnv removes the variable name and by
// which rule: LoaderRule for the loader's variables, else the first
// env.deny pattern that matches it when no env.allow pattern does.
func EnvRemoval(name string, deny, allow []string) (rule string, removed bool) {
	return newEnvMatcher(deny, allow).removal(name)
}

// MatchEnv reports whether the env.deny or env.allow pattern matches the
// variable name, without regard to case: "*_TOKEN" matches github_token.
// A "*" matches any run of characters, "/" included (npm reads names
// such as npm_config_//registry.npmjs.org/:_authToken); a malformed
// pattern matches nothing (validation refuses it first).
func MatchEnv(pattern, name string) bool {
	return compileEnvPattern(pattern).match(foldEnv(name))
}

// envMatcher holds env.deny and env.allow compiled, so that each name of
// an environment is folded once and matched without allocating: a run
// judges every variable against every pattern.
type envMatcher struct {
	deny, allow []envPattern
}

func newEnvMatcher(deny, allow []string) envMatcher {
	var m envMatcher
	for _, p := range deny {
		m.deny = append(m.deny, compileEnvPattern(p))
	}
	for _, p := range allow {
		m.allow = append(m.allow, compileEnvPattern(p))
	}
	return m
}

func (m envMatcher) removal(name string) (rule string, removed bool) {
	if slices.ContainsFunc(policy.LoaderEnvPatterns, func(p string) bool { return strings.HasPrefix(name, strings.TrimSuffix(p, "*")) }) {
		return LoaderRule, true
	}
	if slices.Contains(shellStartupVars, name) {
		return ShellStartupRule, true
	}
	folded := foldEnv(name)
	i := slices.IndexFunc(m.deny, func(p envPattern) bool { return p.match(folded) })
	if i < 0 || slices.ContainsFunc(m.allow, func(p envPattern) bool { return p.match(folded) }) {
		return "", false
	}
	return m.deny[i].raw, true
}

// envPattern is one pattern, folded (see foldEnv).
type envPattern struct {
	raw string
	// parts are the pattern split at "*" when "*" is its only
	// metacharacter, as nearly every pattern is; glob is the pattern
	// for path.Match otherwise.
	parts []string
	glob  string
}

func compileEnvPattern(p string) envPattern {
	f := foldEnv(p)
	if strings.ContainsAny(f, "?[\\") {
		return envPattern{raw: p, glob: f}
	}
	return envPattern{raw: p, parts: strings.Split(f, "*")}
}

func (p envPattern) match(folded string) bool {
	if p.parts == nil {
		ok, err := path.Match(p.glob, folded)
		return ok && err == nil
	}
	if len(p.parts) == 1 {
		return folded == p.parts[0]
	}
	s, ok := strings.CutPrefix(folded, p.parts[0])
	if !ok {
		return false
	}
	last := len(p.parts) - 1
	for _, part := range p.parts[1:last] {
		i := strings.Index(s, part)
		if i < 0 {
			return false
		}
		s = s[i+len(part):]
	}
	return strings.HasSuffix(s, p.parts[last])
}

// foldEnv upper-cases s; path.Match stops a "*" at "/", and "=" can be in
// neither a name nor a valid pattern, so it stands in for "/".
func foldEnv(s string) string { return strings.ReplaceAll(strings.ToUpper(s), "/", "=") }

// GitAutocorrectOff adds help.autocorrect=0 to git's configuration from
// the environment (GIT_CONFIG_COUNT, _KEY_N, _VALUE_N, which beat the
// config files): with autocorrect on in the user's config, a typo (git
// psuh) runs the command git guesses in the same process, where no rule
// on the subcommand can see it. A line that sets it with -c itself is
// judged by the rules (policy's gitForms).
func GitAutocorrectOff(env []string) []string {
	n := 0
	i := slices.IndexFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "GIT_CONFIG_COUNT=") })
	if i >= 0 {
		if c, err := strconv.Atoi(strings.TrimPrefix(env[i], "GIT_CONFIG_COUNT=")); err == nil && c >= 0 {
			n = c
		}
		env = slices.Delete(slices.Clone(env), i, i+1)
	}
	return append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=help.autocorrect", n), fmt.Sprintf("GIT_CONFIG_VALUE_%d=0", n), fmt.Sprintf("GIT_CONFIG_COUNT=%d", n+1))
}

// The private XDG_RUNTIME_DIR, when the inherited one is not usable
// inside: a directory of the private /tmp, fresh at every run, that the
// init makes (mode 0700, the user's) before anything is bound there.
const runtimeDirPrefix = "/tmp/fence-runtime-"

// fixTempEnv points TMPDIR and XDG_RUNTIME_DIR of the plan's environment
// at places the command can use when the inherited ones are not. A
// TMPDIR the command cannot write inside (a directory of the host's /tmp,
// which the private /tmp hides, or one no rule makes writable) becomes
// the private /tmp. An XDG_RUNTIME_DIR is usable when it is a real
// directory (not a link) of the user's, closed to others (as the XDG
// spec wants it), and the command can write in it or connect to a
// socket there that network.allowUnixSockets lists; otherwise it becomes
// a fresh directory of the private /tmp (Mounts.RuntimeDir), or, where
// a rule binds the host's /tmp over the private one, a fresh directory
// the supervisor makes there and removes at exit (Mounts.RuntimeDirHost).
// Variables the environment does not hold are left unset. Only for
// Linux: the macOS runner sets a TMPDIR of its own, and macOS has no
// XDG_RUNTIME_DIR of its own.
func fixTempEnv(plan *Plan, pol *policy.Policy, uid int) {
	if runtime.GOOS == "linux" {
		privateTempEnv(plan, pol, uid)
	}
}

// privateTempEnv is fixTempEnv on any system.
func privateTempEnv(plan *Plan, pol *policy.Policy, uid int) {
	if !plan.Mounts.PrivateTmp {
		return
	}
	if dir, ok := LookupEnv(plan.Env, "TMPDIR"); ok && !writableInside(plan.Mounts, dir) {
		plan.Env = setEnv(plan.Env, "TMPDIR", "/tmp")
	}
	dir, ok := LookupEnv(plan.Env, "XDG_RUNTIME_DIR")
	if !ok || usableRuntimeDir(plan.Mounts, pol, dir, uid) {
		return
	}
	plan.Env = unsetEnv(plan.Env, "XDG_RUNTIME_DIR")
	switch private := privateRuntimeDir(plan.Mounts, uid); {
	case private != "":
		plan.Mounts.RuntimeDir = private
		plan.Env = setEnv(plan.Env, "XDG_RUNTIME_DIR", private)
	case slices.ContainsFunc(plan.Mounts.Binds, func(b Bind) bool { return b.Write && under("/tmp", b.Path) }):
		// A rule shares the host's /tmp: the caller makes the directory
		// there, and the variable is set from the run's Runtime.
		plan.Mounts.RuntimeDirHost = true
	}
}

// usableRuntimeDir reports whether dir can stay the command's
// XDG_RUNTIME_DIR (see fixTempEnv).
func usableRuntimeDir(m Mounts, pol *policy.Policy, dir string, uid int) bool {
	if !path.IsAbs(dir) {
		return false
	}
	fi, err := inputs.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 {
		return false
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != uid {
		return false
	}
	if writableInside(m, dir) {
		return true
	}
	real, err := inputs.EvalSymlinks(dir)
	if err != nil || masked(m, real) || under(real, "/tmp") && !bound(m, real) {
		return false
	}
	return pol.AllUnixSockets || slices.ContainsFunc(pol.UnixSockets, func(r policy.Rule) bool {
		return under(r.Pattern, dir) || under(r.Pattern, real)
	})
}

// writableInside reports whether the command can write in the directory
// dir, as the mounts show it: its links resolved, the deepest bind over
// it writable and no mask over it; the private /tmp itself is writable,
// what of the host's /tmp no bind brings in is not there.
func writableInside(m Mounts, dir string) bool {
	if !path.IsAbs(dir) {
		return false
	}
	real, err := inputs.EvalSymlinks(dir)
	if err != nil || masked(m, real) {
		return false
	}
	if fi, err := inputs.Stat(real); err != nil || !fi.IsDir() {
		return false
	}
	var deepest *Bind
	for i, b := range m.Binds {
		if under(real, b.Path) && (deepest == nil || len(b.Path) > len(deepest.Path)) {
			deepest = &m.Binds[i]
		}
	}
	if deepest != nil {
		return deepest.Write
	}
	return real == "/tmp"
}

func masked(m Mounts, p string) bool {
	return slices.ContainsFunc(m.Masks, func(x Mask) bool { return under(p, x.Path) })
}

func bound(m Mounts, p string) bool {
	return slices.ContainsFunc(m.Binds, func(b Bind) bool { return under(p, b.Path) })
}

// privateRuntimeDir is the first of /tmp/fence-runtime-UID, -UID-1, ...
// that no bind or link made again in the private /tmp covers or lies in
// (see Mounts.Links), so that the directory the init makes in the
// private /tmp stays what the command sees; "" when a bind covers /tmp
// itself.
func privateRuntimeDir(m Mounts, uid int) string {
	for i := range 10 {
		p := runtimeDirPrefix + strconv.Itoa(uid)
		if i > 0 {
			p += "-" + strconv.Itoa(i)
		}
		taken := slices.ContainsFunc(m.Binds, func(b Bind) bool { return under(p, b.Path) || under(b.Path, p) }) ||
			slices.ContainsFunc(m.Links, func(l Link) bool { return under(p, l.Path) || under(l.Path, p) })
		if !taken {
			return p
		}
	}
	return ""
}

// LookupEnv is the value of name in env, the last one set.
func LookupEnv(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// setEnv sets name to value in env, in place of every entry it had.
func setEnv(env []string, name, value string) []string {
	return append(unsetEnv(env, name), name+"="+value)
}

func unsetEnv(env []string, name string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
}
