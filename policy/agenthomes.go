package policy

import (
	"path"
	"path/filepath"
)

// agentHomeVars are the environment variables by which an agent reads its
// settings, hooks and MCP servers from another directory than the one
// below $HOME: the variable, the directory below $HOME it stands for, and
// whether it names that directory itself or a home that holds it.
var agentHomeVars = []struct {
	name, rel string
	holds     bool
}{
	{"CLAUDE_CONFIG_DIR", ".claude", false}, // Claude Code: its settings, and .claude.json, there
	{"CODEX_HOME", ".codex", false},         // Codex: config.toml, hooks.json
	{"COPILOT_HOME", ".copilot", false},     // GitHub Copilot CLI: hooks/, MCP servers
	{"GEMINI_CLI_HOME", ".gemini", true},    // Gemini CLI: $GEMINI_CLI_HOME/.gemini
	// Gemini CLI: the folders whose project settings (hooks) it runs
	{"GEMINI_CLI_TRUSTED_FOLDERS_PATH", ".gemini/trustedFolders.json", false},
}

// AgentHomes are the agents' directories that the environment moves, by
// the directory below $HOME each stands for; a relative value is taken
// from dir, the run's working directory, where the agent that started
// the run most likely resolved it. Variables set empty move nothing.
func AgentHomes(getenv func(string) string, dir string) map[string]string {
	out := map[string]string{}
	for _, v := range agentHomeVars {
		val := getenv(v.name)
		if val == "" {
			continue
		}
		if !filepath.IsAbs(val) {
			val = filepath.Join(dir, val)
		}
		val = path.Clean(filepath.ToSlash(val))
		if v.holds {
			val = path.Join(val, v.rel)
		}
		out[v.rel] = val
	}
	return out
}

// movedAgentPaths are the paths mandatory.agentHooks protects for the
// moved agent directories, each with the name below $HOME it stands for
// (so that agentProtection opens it part by part as it would the
// original). Claude Code keeps .claude.json in its moved directory.
func movedAgentPaths(homes map[string]string) map[string]string {
	out := map[string]string{}
	for rel, dir := range homes {
		out[dir] = rel
		if rel == ".claude" {
			out[path.Join(dir, ".claude.json")] = ".claude.json"
		}
	}
	return out
}
