package policy

import (
	"fmt"
	"path"
	"runtime"
	"strings"
)

// An agent's home directory (~/.claude, ~/.codex) holds its state (session
// transcripts, history, logs, caches) beside its code (settings with hooks
// and MCP servers, hook scripts, commands, plugins). mandatory.agentHooks
// protects the whole directory. An agent run under fence (the claude-code
// and codex templates) must write its state, so where allowWrite rules
// reach into the directory only by literal paths below it, the directory
// is not protected as a whole: the directory itself stays read-only (no
// rule makes it writable, so nothing new can appear at its top), the
// named paths are writable, and the parts that run code stay protected
// whatever a rule names. A rule that covers the directory itself (~,
// ~/.claude) or a glob that may reach into it keeps the whole directory
// protected.
var agentStateDirs = map[string][]string{
	".claude": {
		"settings.json", "settings.local.json", // hooks, statusLine, apiKeyHelper, MCP and plugin settings
		"hooks", "commands", "agents", "skills", "plugins", "output-styles", // run or loaded as the agent's own
		"CLAUDE.md", "rules", // instructions every later session follows
		"local",                                  // the local install: the claude binary itself
		"statusline.sh", "statusline-command.sh", // scripts settings.json names for the status line
		"keybindings.json",
		"shell-snapshots", "session-env", // shell code sourced before each command Claude Code runs
	},
	".codex": {
		"config.toml", "managed_config.toml", // MCP servers, notify, shell environment, profiles
		"hooks.json", "hooks", // hooks
		"AGENTS.md", "AGENTS.override.md", // instructions every later session follows
		"rules",           // command approval rules
		"prompts",         // custom prompts
		"skills",          // skills, scripts included
		"shell_snapshots", // shell code sourced before a command Codex runs
		"packages",        // the standalone install: the codex binary itself
	},
}

// agentStateFiles are agent files of mandatory.agentHooks that an
// allowWrite rule naming the file itself makes writable: Claude Code
// rewrites ~/.claude.json on every start and at each state change, and
// hangs when it cannot. The MCP servers it lists run at Claude Code's
// next start: on Linux fence puts back those keys after the run, and
// every run says what is left (see RunWarnings).
var agentStateFiles = []string{".claude.json"}

// agentProtection is the protection of the home entry rel of
// mandatory.agentHooks (home-relative, absolute p) for the write rules of
// the run: p itself, or, when the write rules open it only part by part,
// its code-running parts.
func agentProtection(rel, p string, write []Rule) []string {
	for _, f := range agentStateFiles {
		if rel == f && namesItself(write, p) {
			return nil
		}
	}
	parts, ok := agentStateDirs[rel]
	if !ok || !opensPartByPart(write, p) {
		return []string{p}
	}
	out := make([]string, 0, len(parts))
	for _, part := range parts {
		out = append(out, path.Join(p, part))
	}
	return out
}

// opensPartByPart reports whether write rules reach below dir, none
// covers dir itself, and none is a glob that could reach into it.
func opensPartByPart(write []Rule, dir string) bool {
	inside := false
	for _, r := range write {
		if r.Glob {
			if prefix := globPrefix(r.Pattern); strings.HasPrefix(dir+"/", prefix) || strings.HasPrefix(prefix, dir+"/") {
				return false
			}
			continue
		}
		pat := path.Clean(r.Pattern)
		if coversPlain(pat, dir, true) {
			return false
		}
		inside = inside || strings.HasPrefix(strings.ToLower(pat), strings.ToLower(dir)+"/")
	}
	return inside
}

// globPrefix is pattern up to its first glob character.
func globPrefix(pattern string) string {
	if i := strings.IndexAny(pattern, "*?[{\\"); i >= 0 {
		return pattern[:i]
	}
	return pattern
}

// agentStateWritable warns about each allowWrite rule that names one of
// agentStateFiles itself, the one way fence leaves it writable, unless a
// deny rule keeps it read-only all the same.
func (l *linter) agentStateWritable() {
	if l.home == "" {
		return
	}
	for _, f := range agentStateFiles {
		p := path.Join(l.home, f)
		if l.denied(p, l.r.Config.Filesystem.DenyRead, l.r.Config.Filesystem.DenyWrite) {
			continue
		}
		for _, rule := range l.r.Config.Filesystem.AllowWrite {
			if e := Expand(rule, l.dir, l.home); !hasGlob(e) && path.Clean(e) == p {
				l.rule("agent-config-writable", "filesystem.allowWrite", rule, agentStateRisk("~/"+f))
			}
		}
	}
}

// agentStateRisk is what a writable agent file f risks. On Linux, fence
// puts back its code-running keys after each run (cmd's guard of agent
// config files), which leaves the time the run lasts.
func agentStateRisk(f string) string {
	if runtime.GOOS == "linux" {
		return fmt.Sprintf("makes %s writable: fence puts back the MCP servers, tool approvals and directory trust the command writes there when the run ends, but a Claude Code started on the host before then starts those servers outside any sandbox", f)
	}
	return fmt.Sprintf("makes %s writable: an MCP server the command adds there starts with Claude Code, outside any sandbox unless Claude Code runs under fence every time", f)
}

// agentFiles are the files, home-relative, that the templates for running
// an agent make writable. fence creates the directories a rule names that
// do not exist yet; these it leaves alone, since a directory in a file's
// place would break the agent on the host too. The agent creates them on
// its first run on the host (sign-in, first prompt), and until then they
// stay read-only.
var agentFiles = []string{
	".claude.json", ".claude/history.jsonl", ".claude/.credentials.json", ".claude/stats-cache.json",
	".codex/history.jsonl", ".codex/session_index.jsonl", ".codex/auth.json", ".codex/version.json",
}

// IsAgentFile reports whether p is one of the agent files below home
// that a template makes writable: not a directory to create.
func IsAgentFile(home, p string) bool {
	for _, f := range agentFiles {
		if home != "" && path.Clean(p) == path.Join(home, f) {
			return true
		}
	}
	return false
}
