package policy

import (
	"slices"
	"strings"
)

// originAgentSettings says why agent settings below a writable tree are
// protected: an agent started in that directory later reads them.
const originAgentSettings = "always protected: coding agent settings below a tree the command may write (an agent started there runs their hooks and MCP servers outside any sandbox)"

// agentWorkspaceNames are the project entries of mandatory.agentHooks
// (.claude, .mcp.json, .codex, .github/hooks, ...).
func agentWorkspaceNames() []string {
	for _, g := range routineGroups {
		if g.Key == "mandatory.agentHooks" {
			return g.Workspace
		}
	}
	return nil
}

// ProtectAgentSettings keeps the project settings of every agent read-only
// wherever an agent could be started on them later, not only on the way
// from the working directory up to the workspace root: up to two levels
// below the top of each of deep, and at the top of each of top (see
// sandbox.AgentSettingsTrees). Each is a
// glob fence always protects: a match that exists is read-only, one the
// command creates is moved aside after the run.
func (p *Policy) ProtectAgentSettings(deep, top []string) {
	var names, nested []string
	for _, n := range agentWorkspaceNames() {
		if strings.Contains(n, "/") {
			nested = append(nested, n)
		} else {
			names = append(names, n)
		}
	}
	ends := append([]string{"{" + strings.Join(names, ",") + "}"}, nested...)
	add := func(dir, middle string) {
		for _, e := range ends {
			pattern := escapeGlob(dir) + middle + e
			if !slices.ContainsFunc(p.DenyWrite, func(r Rule) bool { return r.Pattern == pattern }) {
				p.DenyWrite = append(p.DenyWrite, Rule{Pattern: pattern, Glob: true, Origin: originAgentSettings, Key: "mandatory.agentHooks", Source: "fence (always protected)"})
			}
		}
	}
	for _, d := range deep {
		// Two levels below the workspace root (sub/pkg/.claude), where an
		// agent is started on a part of a repository: deeper, each run would
		// list the whole tree after the command, which a large one (a
		// node_modules) makes cost more than the run.
		for _, middle := range []string{"/", "/*/", "/*/*/"} {
			add(d, middle)
		}
	}
	for _, d := range top {
		add(d, "/")
	}
}

// escapeGlob makes a literal path a glob that matches only itself.
func escapeGlob(p string) string {
	if indexMeta(p) < 0 {
		return p
	}
	var b strings.Builder
	for _, c := range p {
		if strings.ContainsRune(`*?[]{}\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
