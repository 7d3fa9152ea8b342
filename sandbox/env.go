package sandbox

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/fence-sandbox/fence/policy"
)

// LoaderRule names the rule that removes the dynamic loaders' variables
// (policy.LoaderEnvPatterns) whatever the policy says.
const LoaderRule = "fence (the loaders' variables LD_*, DYLD_*)"

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
