package policy

import "testing"

// TestProtectAgentSettings: agent settings are denied up to two levels
// below the top of a deep tree, at the top of a top tree, and nowhere
// else; a tree whose name holds glob characters matches only itself.
func TestProtectAgentSettings(t *testing.T) {
	p := Compile(Config{Filesystem: Filesystem{AllowWrite: []string{"/w", "/t", "/x[1]"}}}, Env{Dir: "/w/r", Home: "/h"})
	p.ProtectAgentSettings([]string{"/w", "/x[1]"}, []string{"/t", "/t/p"})
	for path, denied := range map[string]bool{
		"/w/a/b/.claude/settings.json": true,
		"/w/.mcp.json":                 true,
		"/w/a/.github/hooks/x.json":    true,
		"/w/a/.github/workflows/ci":    false,
		"/w/a/b/notes":                 false,
		"/t/.codex/hooks.json":         true,
		"/t/p/opencode.json":           true,
		"/t/other/.gemini/settings":    false,
		"/w/a/b/c/.claude/settings":    false,
		"/x[1]/a/.cursor/hooks.json":   true,
		"/x1/a/.cursor/hooks.json":     false,
	} {
		d := p.CheckPath("write", path, path)
		if got := !d.Allowed && d.Rule == "mandatory.agentHooks"; got != denied {
			t.Errorf("write %s: allowed=%v by %s, want denied by mandatory.agentHooks: %v", path, d.Allowed, d.Rule, denied)
		}
	}
}
