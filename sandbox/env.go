package sandbox

import (
	"path/filepath"
	"slices"
	"strings"
)

// SanitizeEnv removes loader-injection variables and the policy's env.deny
// names (unless env.allow names them) and marks the sandbox. It returns the
// new environment and the names it removed, sorted.
func SanitizeEnv(environ, deny, allow []string) (env, removed []string) {
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if name == "FENCE_SANDBOX" {
			continue
		}
		if strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "DYLD_") || (matchAny(deny, name) && !matchAny(allow, name)) {
			removed = append(removed, name)
			continue
		}
		env = append(env, kv)
	}
	slices.Sort(removed)
	return append(env, "FENCE_SANDBOX=1"), slices.Compact(removed)
}

func matchAny(globs []string, name string) bool {
	return slices.ContainsFunc(globs, func(g string) bool {
		ok, _ := filepath.Match(g, name)
		return ok
	})
}
