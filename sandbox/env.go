package sandbox

import (
	"path"
	"slices"
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
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if name == "FENCE_SANDBOX" {
			continue
		}
		if _, drop := EnvRemoval(name, deny, allow); drop {
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
	if slices.ContainsFunc(policy.LoaderEnvPatterns, func(p string) bool { return strings.HasPrefix(name, strings.TrimSuffix(p, "*")) }) {
		return LoaderRule, true
	}
	i := slices.IndexFunc(deny, func(p string) bool { return MatchEnv(p, name) })
	if i < 0 || slices.ContainsFunc(allow, func(p string) bool { return MatchEnv(p, name) }) {
		return "", false
	}
	return deny[i], true
}

// MatchEnv reports whether the env.deny or env.allow pattern matches the
// variable name, without regard to case: "*_TOKEN" matches github_token.
// A "*" matches any run of characters, "/" included (npm reads names
// such as npm_config_//registry.npmjs.org/:_authToken); a malformed
// pattern matches nothing (validation refuses it first).
func MatchEnv(pattern, name string) bool {
	// path.Match stops a "*" at "/"; "=" can be in neither a name nor a
	// valid pattern, so it stands in for "/" on both sides.
	fold := func(s string) string { return strings.ReplaceAll(strings.ToUpper(s), "/", "=") }
	ok, err := path.Match(fold(pattern), fold(name))
	return ok && err == nil
}
