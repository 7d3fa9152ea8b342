package policy

import (
	"strings"
	"testing"
)

// agentTemplate compiles the builtin template name, with extra write
// rules of a user's own on top, for home /h and workspace /w.
func agentTemplate(t *testing.T, name string, extraWrite ...string) *Policy {
	t.Helper()
	r, err := Load(Options{Template: name, Dir: "/w", Home: "/h", UserConfigDir: "/h/.config/fence"})
	if err != nil {
		t.Fatal(err)
	}
	c := r.Config
	c.Filesystem.AllowWrite = append(c.Filesystem.AllowWrite, extraWrite...)
	return Compile(c, Env{Dir: "/w", Home: "/h", UserConfigDir: "/h/.config/fence"})
}

type writeCase struct {
	path    string
	allowed bool
	rule    string // the decision's rule
	pattern string // the protected path, for a mandatory denial
}

func checkWrites(t *testing.T, p *Policy, cases []writeCase) {
	t.Helper()
	for _, c := range cases {
		d := p.CheckPath("write", c.path, c.path)
		if d.Allowed != c.allowed || d.Rule != c.rule {
			t.Errorf("write %s: allowed %v by %s, want %v by %s", c.path, d.Allowed, d.Rule, c.allowed, c.rule)
		}
		if r := firstCovering(p.DenyWrite, c.path); c.pattern != "" && (r == nil || r.Pattern != c.pattern) {
			t.Errorf("write %s: protected by %v, want %s", c.path, r, c.pattern)
		}
	}
}

// TestClaudeCodeTemplateWrites: Claude Code's state is writable, what
// runs code later is not, and the directory itself stays read-only.
func TestClaudeCodeTemplateWrites(t *testing.T) {
	const ah = "mandatory.agentHooks"
	checkWrites(t, agentTemplate(t, "claude-code"), []writeCase{
		{"/h/.claude/projects/-w/0b1c.jsonl", true, "filesystem.allowWrite", ""},
		{"/h/.claude/todos/x.json", true, "filesystem.allowWrite", ""},
		{"/h/.claude/shell-snapshots/snapshot-bash.sh", false, ah, "/h/.claude/shell-snapshots"},
		{"/h/.claude/session-env/s/hook-0.sh", false, ah, "/h/.claude/session-env"},
		{"/h/.claude/history.jsonl", true, "filesystem.allowWrite", ""},
		{"/h/.claude/.credentials.json", true, "filesystem.allowWrite", ""},
		{"/h/.claude.json", true, "filesystem.allowWrite", ""},
		{"/h/.local/state/claude/locks/x", true, "filesystem.allowWrite", ""},
		{"/h/.cache/claude-cli-nodejs/x", true, "filesystem.allowWrite", ""},
		{"/h/.claude/settings.json", false, ah, "/h/.claude/settings.json"},
		{"/h/.claude/settings.local.json", false, ah, "/h/.claude/settings.local.json"},
		{"/h/.claude/hooks/pre.sh", false, ah, "/h/.claude/hooks"},
		{"/h/.claude/commands/x.md", false, ah, "/h/.claude/commands"},
		{"/h/.claude/agents/x.md", false, ah, "/h/.claude/agents"},
		{"/h/.claude/skills/x/SKILL.md", false, ah, "/h/.claude/skills"},
		{"/h/.claude/plugins/installed_plugins.json", false, ah, "/h/.claude/plugins"},
		{"/h/.claude/CLAUDE.md", false, ah, "/h/.claude/CLAUDE.md"},
		{"/h/.claude/rules/go.md", false, ah, "/h/.claude/rules"},
		{"/h/.claude/stop-hook.sh", false, "filesystem.allowWrite", ""},
		{"/h/.claude/downloads/claude-2.1.0", false, "filesystem.allowWrite", ""},
		{"/h/.claude/tasks/t.json", true, "filesystem.allowWrite", ""},
		{"/h/.claude/backups/.claude.json.backup", true, "filesystem.allowWrite", ""},
		{"/h/.claude/local/claude", false, ah, "/h/.claude/local"},
		// Not named: the directory is read-only, nothing new at its top.
		{"/h/.claude/new-thing", false, "filesystem.allowWrite", ""},
		{"/h/.claude", false, "filesystem.allowWrite", ""},
		// The installed versions run on the host's next start.
		{"/h/.local/share/claude/versions/2.0.0", false, "filesystem.allowWrite", ""},
		{"/h/.local/bin/claude", false, "filesystem.allowWrite", ""},
		// The project's own settings and MCP servers.
		{"/w/.claude/settings.json", false, ah, "/w/.claude"},
		{"/w/.claude/settings.local.json", false, ah, "/w/.claude"},
		{"/w/.mcp.json", false, ah, "/w/.mcp.json"},
		{"/w/CLAUDE.md", true, "filesystem.allowWrite", ""},
		{"/w/src/main.go", true, "filesystem.allowWrite", ""},
	})
}

// TestCodexTemplateWrites is the same for Codex.
func TestCodexTemplateWrites(t *testing.T) {
	const ah = "mandatory.agentHooks"
	checkWrites(t, agentTemplate(t, "codex"), []writeCase{
		{"/h/.codex/sessions/2026/12/01/rollout.jsonl", true, "filesystem.allowWrite", ""},
		{"/h/.codex/log/codex-tui.log", true, "filesystem.allowWrite", ""},
		{"/h/.codex/history.jsonl", true, "filesystem.allowWrite", ""},
		{"/h/.codex/auth.json", true, "filesystem.allowWrite", ""},
		{"/h/.codex/config.toml", false, ah, "/h/.codex/config.toml"},
		{"/h/.codex/hooks.json", false, ah, "/h/.codex/hooks.json"},
		{"/h/.codex/AGENTS.md", false, ah, "/h/.codex/AGENTS.md"},
		{"/h/.codex/rules/default.rules", false, ah, "/h/.codex/rules"},
		{"/h/.codex/prompts/x.md", false, ah, "/h/.codex/prompts"},
		{"/h/.codex/skills/x/SKILL.md", false, ah, "/h/.codex/skills"},
		{"/h/.codex/shell_snapshots/s.sh", false, ah, "/h/.codex/shell_snapshots"},
		{"/h/.codex/packages/standalone/codex", false, ah, "/h/.codex/packages"},
		{"/h/.codex/session_index.jsonl", true, "filesystem.allowWrite", ""},
		{"/h/.codex/deep.config.toml", false, "filesystem.allowWrite", ""},
		{"/h/.codex/state_5.sqlite", false, "filesystem.allowWrite", ""},
		{"/h/.codex/new-thing", false, "filesystem.allowWrite", ""},
		{"/w/.codex/config.toml", false, ah, "/w/.codex"},
		// Claude Code's files are not Codex's to write.
		{"/h/.claude.json", false, ah, "/h/.claude.json"},
		{"/h/.claude/projects/x", false, ah, "/h/.claude"},
	})
}

// TestAgentDirWholeWhenReachedOtherwise: a rule that covers the agent's
// directory (a user's "~", the directory itself) or a glob that may
// reach into it keeps the whole directory protected, the state parts
// the template names included; naming a part that runs code does not
// make it writable.
func TestAgentDirWholeWhenReachedOtherwise(t *testing.T) {
	const ah = "mandatory.agentHooks"
	for _, extra := range []string{"~", "~/.claude", "~/.claude/", "~/.CLAUDE", "~/.claude/*", "~/.cl*", "~/**/projects", "/h/.claude/../.claude"} {
		t.Run(extra, func(t *testing.T) {
			checkWrites(t, agentTemplate(t, "claude-code", extra), []writeCase{
				{"/h/.claude/projects/x", false, ah, "/h/.claude"},
				{"/h/.claude/settings.json", false, ah, "/h/.claude"},
				{"/h/.claude/hooks/x", false, ah, "/h/.claude"},
			})
		})
	}
	checkWrites(t, agentTemplate(t, "claude-code", "~/.claude/settings.json", "~/.claude/hooks", "~/.claude/plugins/cache"), []writeCase{
		{"/h/.claude/settings.json", false, ah, "/h/.claude/settings.json"},
		{"/h/.claude/hooks/x", false, ah, "/h/.claude/hooks"},
		{"/h/.claude/plugins/cache/x", false, ah, "/h/.claude/plugins"},
	})
	// Without a template naming it, ~/.claude.json stays protected, and a
	// rule reaching it through a parent does not lift that.
	checkWrites(t, agentTemplate(t, "code", "~"), []writeCase{
		{"/h/.claude.json", false, ah, "/h/.claude.json"},
		{"/h/.claude/projects/x", false, ah, "/h/.claude"},
		{"/h/.codex/sessions/x", false, ah, "/h/.codex"},
	})
	checkWrites(t, agentTemplate(t, "code", "~/.claude.json*"), []writeCase{
		{"/h/.claude.json", false, ah, "/h/.claude.json"},
	})
}

// TestAgentTemplateDomains: the agent's hosts are reachable, telemetry
// and other hosts are not, cloud metadata never.
func TestAgentTemplateDomains(t *testing.T) {
	for name, hosts := range map[string]map[string]bool{
		"claude-code": {"api.anthropic.com": true, "claude.ai": true, "platform.claude.com": true, "console.anthropic.com": true,
			"registry.npmjs.org": true, "github.com": true, "statsig.anthropic.com": false, "sentry.io": false, "chatgpt.com": false, "example.com": false, "169.254.169.254": false},
		"codex": {"api.openai.com": true, "auth.openai.com": true, "chatgpt.com": true, "api.github.com": true,
			"claude.ai": false, "example.com": false, "evil.chatgpt.com.example": false, "169.254.169.254": false},
	} {
		p := agentTemplate(t, name)
		for host, want := range hosts {
			if d := p.DecideHost(host); d.Allowed != want {
				t.Errorf("%s: %s allowed = %v (%s), want %v", name, host, d.Allowed, d.Rule, want)
			}
		}
	}
}

// TestAgentTemplateRunWarning: a claude-code run says that ~/.claude.json
// is writable and why it matters; codex has nothing to say.
func TestAgentTemplateRunWarning(t *testing.T) {
	for name, want := range map[string]string{"claude-code": "agent-config-writable", "codex": ""} {
		r, err := Load(Options{Template: name, Dir: "/w", Home: "/h", UserConfigDir: "/h/.config/fence"})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, w := range RunWarnings(r, "/w", "/h") {
			got = append(got, w.Check)
			if !strings.Contains(w.String(), "~/.claude.json") || !strings.Contains(w.String(), "MCP server") {
				t.Errorf("%s: warning %q does not say what is writable and why", name, w)
			}
		}
		if strings.Join(got, ",") != want {
			t.Errorf("%s: run warnings %v, want %q", name, got, want)
		}
	}
}

// TestAgentConfigWritableLint: lint and a run warn about a rule that
// names ~/.claude.json itself, and not when a deny keeps it read-only or
// a rule only reaches it through a parent (then it stays protected).
func TestAgentConfigWritableLint(t *testing.T) {
	for cfg, want := range map[string]int{
		`{"filesystem": {"allowWrite": ["~/.claude.json"]}}`:                                  1,
		`{"filesystem": {"allowWrite": ["/h/.claude.json"]}}`:                                 1,
		`{"filesystem": {"allowWrite": ["~/.claude.json"], "denyWrite": ["~/.claude.json"]}}`: 0,
		`{"filesystem": {"allowWrite": ["~"]}}`:                                               0,
		`{"filesystem": {"allowWrite": ["~/.claude.json.bak"]}}`:                              0,
	} {
		p, err := parse("/w/fence.jsonc", []byte(cfg))
		if err != nil {
			t.Fatal(err)
		}
		r := &Resolved{Config: p.cfg}
		for name, ws := range map[string][]Warning{"lint": Lint(r, "/w", "/h"), "run": RunWarnings(r, "/w", "/h")} {
			n := 0
			for _, w := range ws {
				if w.Check == "agent-config-writable" {
					n++
				}
			}
			if n != want {
				t.Errorf("%s %s: %d agent-config-writable warnings, want %d", name, cfg, n, want)
			}
		}
	}
}

// BenchmarkCompileAgentTemplate compiles claude-code and codex beside
// code, which protects the agents' directories whole: the cost of
// protecting them part by part.
func BenchmarkCompileAgentTemplate(b *testing.B) {
	for _, name := range []string{"code", "claude-code", "codex"} {
		r, err := Load(Options{Template: name, Dir: "/w", Home: "/h", UserConfigDir: "/h/.config/fence"})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				Compile(r.Config, Env{Dir: "/w", Home: "/h", UserConfigDir: "/h/.config/fence"})
			}
		})
	}
}
