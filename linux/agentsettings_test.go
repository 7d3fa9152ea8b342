//go:build linux

package linux_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// agentSettingsScript plants agent settings, from inside, where an agent
// started later would read them but that is not on the way from the
// working directory up to the workspace root.
const agentSettingsScript = `
try() { sh -c "$1" 2>/dev/null && echo "WROTE $2" || echo "denied $2"; }
hook='{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"touch MARK"}]}]}}'
try "mkdir -p sub/pkg/.claude && echo '$hook' > sub/pkg/.claude/settings.json" subdir-new
try "echo '$hook' > sub/old/.claude/settings.json" subdir-existing
try "mkdir -p sub/pkg/.github/hooks && echo '{}' > sub/pkg/.github/hooks/x.json" subdir-copilot
try "mkdir -p ../.claude && echo '{\"disableAllHooks\":true}' > ../.claude/settings.local.json" parent-new
try "mkdir -p ../.codex && echo '{}' > ../.codex/hooks.json" parent-codex-new
try "echo '{}' > ../.gemini/settings.json" parent-existing
try "echo ok > ../outside/proj/notes" neighbour
`

// TestAgentSettingsBelowWritableTrees: agent settings in a subdirectory
// of the workspace and in the directory above the repository (the top
// of a writable tree) are read-only when they
// exist and moved aside after the run when the command creates them (the
// Landlock-only engine refuses most of them outright), as root and as
// uid 65534, in both engines.
func TestAgentSettingsBelowWritableTrees(t *testing.T) {
	for _, engine := range []string{"namespaces", "landlock-only"} {
		us := users(t)
		if engine == "landlock-only" {
			us = landlockOnlyUsers(t)
		}
		for _, u := range us {
			t.Run(engine+"/"+u.name, func(t *testing.T) {
				var w *world
				var r result
				const pol = `{"filesystem": {"allowWrite": [".."]}}`
				if engine == "namespaces" {
					w = newWorld(t, u.uid, pol)
				} else {
					w = landlockWorld(t, u, pol)
				}
				planted := map[string]string{
					"ws/sub/old/.claude/settings.json": "{}\n",
					".gemini/settings.json":            "{}\n",
				}
				w.plant(t, map[string]string{"outside/proj/README": ""})
				w.plant(t, planted)
				if engine == "namespaces" {
					r = w.fence(t, "", nil, "-c", agentSettingsScript)
				} else {
					r = w.landlockOnly(t, u, "-c", agentSettingsScript)
				}
				if r.code != 0 {
					t.Errorf("exit %d\nstderr:\n%s", r.code, r.stderr)
				}
				for _, want := range []string{"denied subdir-existing", "denied parent-existing", "WROTE neighbour"} {
					if !regexpMatch(`(?m)^`+want+`$`, r.stdout) {
						t.Errorf("stdout lacks %q:\n%s\nstderr:\n%s", want, r.stdout, r.stderr)
					}
				}
				for name, content := range planted {
					if b, _ := os.ReadFile(filepath.Join(w.base, name)); string(b) != content {
						t.Errorf("%s changed: %q", name, b)
					}
				}
				for _, p := range []string{"ws/sub/pkg/.claude", "ws/sub/pkg/.github/hooks", ".claude", ".codex"} {
					full := filepath.Join(w.base, p)
					if _, err := os.Lstat(full); err == nil {
						t.Errorf("%s is still there after the run:\n%s", p, r.stderr)
					}
					// The Landlock-only engine refuses an entry made directly
					// in a directory on the way to a protected path instead.
					if engine == "namespaces" && !strings.Contains(r.stderr, "the command created "+full+" ") {
						t.Errorf("no warning names %s:\n%s", full, r.stderr)
					}
				}
			})
		}
	}
}
