package policy

import (
	"maps"
	"testing"
)

// TestAgentHomes: the variables that move an agent's directory, absolute
// or relative to the run's directory, and unset or empty ones ignored.
func TestAgentHomes(t *testing.T) {
	env := map[string]string{
		"CLAUDE_CONFIG_DIR": "/x/claude/", "CODEX_HOME": "state/codex", "COPILOT_HOME": "",
		"GEMINI_CLI_HOME": "/g", "GEMINI_CLI_TRUSTED_FOLDERS_PATH": "/t/trusted.json",
	}
	got := AgentHomes(func(k string) string { return env[k] }, "/w")
	want := map[string]string{
		".claude": "/x/claude", ".codex": "/w/state/codex", ".gemini": "/g/.gemini",
		".gemini/trustedFolders.json": "/t/trusted.json",
	}
	if !maps.Equal(got, want) {
		t.Errorf("AgentHomes = %v, want %v", got, want)
	}
}

// TestMovedAgentHomesProtected: an agent directory a variable moves is
// protected as the one below $HOME is, whatever the write rules (here the
// whole of /x and /w writable): whole, or part by part where the policy
// opens it by literal paths below it.
func TestMovedAgentHomesProtected(t *testing.T) {
	const ah = "mandatory.agentHooks"
	env := Env{Dir: "/w", Home: "/h", UserConfigDir: "/h/.config/fence", AgentHomes: map[string]string{
		".claude": "/x/claude", ".codex": "/w/codex", ".copilot": "/x/copilot", ".gemini": "/x/g/.gemini",
		".gemini/trustedFolders.json": "/x/trusted.json",
	}}
	p := Compile(Config{Filesystem: Filesystem{AllowWrite: []string{"/x", "."}}}, env)
	checkWrites(t, p, []writeCase{
		{"/x/claude/settings.json", false, ah, "/x/claude"},
		{"/x/claude/.claude.json", false, ah, "/x/claude"},
		{"/x/claude/projects/p.jsonl", false, ah, "/x/claude"},
		{"/w/codex/hooks.json", false, ah, "/w/codex"},
		{"/x/copilot/hooks/fence.json", false, ah, "/x/copilot"},
		{"/x/g/.gemini/settings.json", false, ah, "/x/g/.gemini"},
		{"/x/trusted.json", false, ah, "/x/trusted.json"},
		{"/x/g/other", true, "filesystem.allowWrite", ""},
		{"/w/src/main.go", true, "filesystem.allowWrite", ""},
	})
	// Opened part by part, as the claude-code template opens ~/.claude.
	p = Compile(Config{Filesystem: Filesystem{AllowWrite: []string{"/x/claude/projects", "/x/claude/.claude.json"}}}, env)
	checkWrites(t, p, []writeCase{
		{"/x/claude/projects/p.jsonl", true, "filesystem.allowWrite", ""},
		{"/x/claude/.claude.json", true, "filesystem.allowWrite", ""},
		{"/x/claude/settings.json", false, ah, "/x/claude/settings.json"},
		{"/x/claude/hooks/h.sh", false, ah, "/x/claude/hooks"},
	})
}
